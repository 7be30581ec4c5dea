package recovery

import "fmt"

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
}

// SituationOf fills in the parts of a Situation that m knows for phase
// index: consecutive failures, replans that answered, escalations and
// whether a replan of the phase could still be reserved.
func SituationOf(m Memory, index int, cfg Config) Situation {
	p := m.Phase(index)
	return Situation{
		ConsecutiveFailures: p.Attempts,
		Replans:             p.Replanned,
		Escalations:         p.Escalations,
		RunReplansLeft:      budgetLeft(m, Request{Kind: CallReplan, Phase: index}, cfg) == nil,
	}
}

// Stuck decides, deterministically, what to do with a phase whose limits
// are exhausted. The rules, first match wins:
//
//  1. ambiguity, or an approval is required → needs_human;
//  2. the iteration cap is reached → stop;
//  3. less than Config.ReduceScopeBelow (20%) of the run budget left → reduce_scope;
//  4. 2 or more consecutive failures and no replan of the phase yet (and
//     one left to reserve) → replan;
//  5. a replan answered with a revision, an escalation model is
//     configured, fewer than Config.MaxEscalationsPerPhase (1)
//     escalations in the phase and more than Config.EscalateAbove (30%)
//     of the budget left → escalate_model;
//  6. otherwise → stop, today's halt.
//
// It returns the decision and why. cfg must be validated.
func Stuck(s Situation, cfg Config) (StuckDecision, string) {
	left := s.Budget.Remaining()
	switch {
	case s.Ambiguous:
		return StuckNeedsHuman, "the failure is ambiguous"
	case s.ApprovalRequired:
		return StuckNeedsHuman, "a human's approval is required"
	case s.IterationCap > 0 && s.Iteration >= s.IterationCap:
		return StuckStop, fmt.Sprintf("iteration cap reached (%d of %d)", s.Iteration, s.IterationCap)
	case left < cfg.ReduceScopeBelow:
		return StuckReduceScope, fmt.Sprintf("%.0f%% of the run budget left, under %.0f%%", left*100, cfg.ReduceScopeBelow*100)
	case s.ConsecutiveFailures >= 2 && s.Replans == 0 && s.RunReplansLeft:
		return StuckReplan, fmt.Sprintf("%d consecutive failures and no replan yet", s.ConsecutiveFailures)
	case s.Replans > 0 && s.EscalationModel && s.Escalations < cfg.MaxEscalationsPerPhase && left > cfg.EscalateAbove:
		return StuckEscalateModel, fmt.Sprintf("replanned already; %.0f%% of the budget left", left*100)
	}
	return StuckStop, "no recovery left"
}
