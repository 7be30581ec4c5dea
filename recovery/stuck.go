package recovery

import (
	"fmt"
	"strings"
)

// StuckDecision is what the stuck handler decides for a phase that has
// exhausted today's limits.
type StuckDecision int

// The stuck handler's decisions. The zero value is StuckStop.
const (
	StuckStop          StuckDecision = iota // halt the run, as without recovery
	StuckNeedsHuman                         // interrupt and ask a human
	StuckReduceScope                        // propose a smaller scope; a human must consent
	StuckReplan                             // revise the phase's approach within its anchor
	StuckEscalateModel                      // retry the phase with the escalation model
)

func stuckNames() []string {
	return []string{"stop", "needs_human", "reduce_scope", "replan", "escalate_model"}
}

// String returns the decision's name, such as "reduce_scope".
func (d StuckDecision) String() string {
	if n := stuckNames(); d >= 0 && int(d) < len(n) {
		return n[d]
	}
	return fmt.Sprintf("StuckDecision(%d)", int(d))
}

// MarshalText encodes the decision as its name.
func (d StuckDecision) MarshalText() ([]byte, error) {
	if n := stuckNames(); d >= 0 && int(d) < len(n) {
		return []byte(n[d]), nil
	}
	return nil, fmt.Errorf("recovery: invalid stuck decision %d", int(d))
}

// UnmarshalText decodes a decision name.
func (d *StuckDecision) UnmarshalText(b []byte) error {
	for i, n := range stuckNames() {
		if n == string(b) {
			*d = StuckDecision(i)
			return nil
		}
	}
	return fmt.Errorf("recovery: unknown stuck decision %q", b)
}

// Budget is the run's spending against its limits. A zero limit is no
// limit.
type Budget struct {
	MaxCostUSD  float64 `json:"max_cost_usd,omitempty"`
	SpentUSD    float64 `json:"spent_usd,omitempty"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	SpentTokens int     `json:"spent_tokens,omitempty"`
}

// Remaining returns the fraction of the budget left, in [0, 1]: the
// smaller of the cost and token fractions, 1 when there are no limits, 0
// when a spend is not a number.
func (b Budget) Remaining() float64 {
	left := 1.0
	if b.MaxCostUSD > 0 {
		left = min(left, (b.MaxCostUSD-b.SpentUSD)/b.MaxCostUSD)
	}
	if b.MaxTokens > 0 {
		left = min(left, float64(b.MaxTokens-b.SpentTokens)/float64(b.MaxTokens))
	}
	if left != left { // a NaN spend: treat the budget as gone
		return 0
	}
	return max(0, min(1, left))
}

// Warn reports whether the run has spent at least Config.BudgetWarnAt of
// its budget (80% by default), the point at which an event fires.
func (b Budget) Warn(cfg Config) bool {
	return (b.MaxCostUSD > 0 || b.MaxTokens > 0) && 1-b.Remaining() >= cfg.BudgetWarnAt
}

// Situation is what the stuck handler knows of a phase that is stuck.
type Situation struct {
	Ambiguous        bool   // the failure or the plan is ambiguous: a human must say what is meant
	ApprovalRequired bool   // the next step needs a human's approval
	Iteration        int    // the run's iterations so far
	IterationCap     int    // 0: no cap
	Budget           Budget // the run's spending
	// ConsecutiveFailures counts the phase's failed attempts in a row.
	ConsecutiveFailures int
	// Fatal is the fatal error type of the phase's latest failure
	// (FatalType), CatNone when it is of none. (A Doctor's diagnosis of
	// one is advice to ask the human, Advice.Fatal.)
	Fatal Category
	// Truncations counts the phase's latest failures in a row that were
	// cut off by their turn or token limit (CatTruncation).
	Truncations int
	// Replans counts the phase's replans that answered with a revision;
	// one abandoned after crashes, or without a revision, is not one.
	Replans     int
	Escalations int // model escalations of this phase so far
	// EscalationModel is true when an escalation model is configured
	// (roles.developer.escalation_model); without one there is nothing to
	// escalate to.
	EscalationModel bool
	// RunReplansLeft is false when the run's or the phase's replan budget
	// is used up, so a replan could not be reserved.
	RunReplansLeft bool
	// ReplanSpent is the replan budget that is used up (the phase's or
	// the run's), nil while a replan can be reserved.
	ReplanSpent *Limit
	// DoctorSpent is the Doctor budget that keeps the phase's latest
	// failure from another Doctor call, nil while one can be reserved.
	DoctorSpent *Limit
}

// Limit is a recovery budget that is used up: what it counts, how much
// was used, its limit and the key under recovery: in gaffer.yaml that
// sets it.
type Limit struct {
	What string // what it counts: "replans", "Doctor calls", …
	Used int
	Max  int
	Key  string // such as "max_replans_per_run"
}

// String returns the budget as a stop reason names it, such as
// "replans 0 of max_replans_per_run 0".
func (l Limit) String() string {
	return fmt.Sprintf("%s %d of %s %d", l.What, l.Used, l.Key, l.Max)
}

// SituationOf fills in the parts of a Situation that m knows for phase
// index: consecutive failures, replans that answered, escalations,
// whether a replan of the phase could still be reserved and the replan
// and Doctor budgets that are used up.
func SituationOf(m Memory, index int, cfg Config) Situation {
	p := m.Phase(index)
	replan, _, _ := spentLimit(m, Request{Kind: CallReplan, Phase: index}, cfg)
	var doctor *Limit
	if len(p.Failures) > 0 {
		doctor, _, _ = spentLimit(m, doctorFor(m, index, cfg), cfg)
	}
	truncated := 0
	for i := len(p.Failures) - 1; i >= 0 && p.Failures[i].Category == CatTruncation; i-- {
		truncated++
	}
	fatal, ok := FatalType(m, index, cfg)
	if !ok {
		fatal = CatNone
	}
	return Situation{
		Fatal:               fatal,
		ConsecutiveFailures: p.Attempts,
		Truncations:         truncated,
		Replans:             p.Replanned,
		Escalations:         p.Escalations,
		RunReplansLeft:      replan == nil,
		ReplanSpent:         replan,
		DoctorSpent:         doctor,
	}
}

// Stuck decides, deterministically, what to do with a phase whose limits
// are exhausted. The rules, first match wins:
//
//  0. a failure of a fatal error type (Situation.Fatal, seed 003's
//     fatal_error_types) → needs_human at once;
//  1. ambiguity, or an approval is required → needs_human;
//  2. the iteration cap is reached → stop;
//  3. less than Config.ReduceScopeBelow (20%) of the run budget left → reduce_scope;
//  4. the phase's last 2 failures were cut off by the turn or token
//     limit (truncation, seed 003's truncation check): the work does not
//     fit a session → replan, to split it into smaller tasks, when no
//     replan answered yet and one is left; else escalate_model when
//     rule 6 allows it; else reduce_scope;
//  5. 2 or more consecutive failures and no replan of the phase yet (and
//     one left to reserve) → replan;
//  6. a replan answered with a revision, an escalation model is
//     configured, fewer than Config.MaxEscalationsPerPhase (1)
//     escalations in the phase and more than Config.EscalateAbove (30%)
//     of the budget left → escalate_model;
//  7. otherwise → stop, today's halt.
//
// It returns the decision and why. A stop at rule 7 names the budgets
// that are used up and kept recovery from going on (Situation.Spent),
// with their values and keys. cfg must be validated.
func Stuck(s Situation, cfg Config) (StuckDecision, string) {
	left := s.Budget.Remaining()
	switch {
	case s.Fatal != CatNone:
		return StuckNeedsHuman, fmt.Sprintf("fatal error type %s: retrying or replanning will not fix it", s.Fatal)
	case s.Ambiguous:
		return StuckNeedsHuman, "the failure is ambiguous"
	case s.ApprovalRequired:
		return StuckNeedsHuman, "a human's approval is required"
	case s.IterationCap > 0 && s.Iteration >= s.IterationCap:
		return StuckStop, fmt.Sprintf("iteration cap reached (%d of %d)", s.Iteration, s.IterationCap)
	case left < cfg.ReduceScopeBelow:
		return StuckReduceScope, fmt.Sprintf("%.0f%% of the run budget left, under %.0f%% (%s)", left*100, cfg.ReduceScopeBelow*100, s.Budget.Figures())
	case s.Truncations >= 2:
		return truncated(s, cfg, left)
	case s.ConsecutiveFailures >= 2 && s.Replans == 0 && s.RunReplansLeft:
		return StuckReplan, fmt.Sprintf("%d consecutive failures and no replan yet", s.ConsecutiveFailures)
	case s.Replans > 0 && s.EscalationModel && s.Escalations < cfg.MaxEscalationsPerPhase && left > cfg.EscalateAbove:
		return StuckEscalateModel, fmt.Sprintf("replanned already; %.0f%% of the budget left", left*100)
	}
	return StuckStop, noRecoveryLeft(s, cfg)
}

// truncated is rule 4 of Stuck: a phase cut off by its limits twice.
func truncated(s Situation, cfg Config, left float64) (StuckDecision, string) {
	why := fmt.Sprintf("cut off by its turn or token limit %d times in a row", s.Truncations)
	switch {
	case s.Replans == 0 && s.RunReplansLeft:
		return StuckReplan, why + ": replan to split the phase into smaller tasks"
	case s.EscalationModel && s.Escalations < cfg.MaxEscalationsPerPhase && left > cfg.EscalateAbove:
		return StuckEscalateModel, fmt.Sprintf("%s, and replanned already or no replan left; %.0f%% of the budget left", why, left*100)
	}
	return StuckReduceScope, why + ", with no replan or escalation left: reduce the phase's scope"
}

// Spent returns the budgets that are used up and kept the stuck handler
// from going on, in this order: the replan budget when rule 5 of Stuck
// would have replanned but for it, the Doctor budget (DoctorSpent) that
// kept the Doctor from being asked again, and the escalation budget
// (max_escalations_per_phase) when rule 6 would have escalated but for
// it. None when the phase has budget left or a rule applies for another
// reason. cfg must be validated.
func (s Situation) Spent(cfg Config) []Limit {
	var spent []Limit
	if s.ReplanSpent != nil && s.ConsecutiveFailures >= 2 && s.Replans == 0 {
		spent = append(spent, *s.ReplanSpent)
	}
	if s.DoctorSpent != nil {
		spent = append(spent, *s.DoctorSpent)
	}
	if s.Replans > 0 && s.EscalationModel && s.Budget.Remaining() > cfg.EscalateAbove && s.Escalations >= cfg.MaxEscalationsPerPhase {
		spent = append(spent, Limit{What: "escalations", Used: s.Escalations, Max: cfg.MaxEscalationsPerPhase, Key: "max_escalations_per_phase"})
	}
	return spent
}

// noRecoveryLeft is the reason of a stop at rule 7 of Stuck: "no recovery
// left", then the budgets that stood in the way (Situation.Spent), if
// any, such as "no recovery left: replans 0 of max_replans_per_run 0
// (raise it under recovery: in gaffer.yaml)".
func noRecoveryLeft(s Situation, cfg Config) string {
	spent := s.Spent(cfg)
	names := make([]string, len(spent))
	for i, l := range spent {
		names[i] = l.String()
	}
	switch len(names) {
	case 0:
		return "no recovery left"
	case 1:
		return "no recovery left: " + names[0] + " (raise it under recovery: in gaffer.yaml)"
	}
	return "no recovery left: " + strings.Join(names, ", ") + " (raise them under recovery: in gaffer.yaml)"
}
