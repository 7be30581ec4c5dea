package recovery

import (
	"fmt"
	"slices"
	"strings"
)

// CallKind is what a reserved call is for.
type CallKind int

// The kinds of call. The zero value is CallDoctor.
const (
	CallDoctor CallKind = iota // a Doctor diagnosis
	CallReplan                 // a replanner revision of a phase
)

// String returns "doctor" or "replan".
func (k CallKind) String() string {
	switch k {
	case CallDoctor:
		return "doctor"
	case CallReplan:
		return "replan"
	}
	return fmt.Sprintf("CallKind(%d)", int(k))
}

// MarshalText encodes the kind as its name.
func (k CallKind) MarshalText() ([]byte, error) {
	if k != CallDoctor && k != CallReplan {
		return nil, fmt.Errorf("recovery: invalid call kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText decodes "doctor" or "replan".
func (k *CallKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "doctor":
		*k = CallDoctor
	case "replan":
		*k = CallReplan
	default:
		return fmt.Errorf("recovery: unknown call kind %q", b)
	}
	return nil
}

// Request is a call the workflow wants to make.
type Request struct {
	Kind  CallKind `json:"kind"`
	Phase int      `json:"phase"`
	Tier  Tier     `json:"tier"`            // Doctor calls only
	Infra bool     `json:"infra,omitempty"` // a Doctor call for an infra failure
}

// Call is a reserved call: its budget is already counted in the Memory
// that Reserve returned.
type Call struct {
	Request
	ID int `json:"id"`
	// Tries is 1 once reserved, 2 once RetryPending let it be made again
	// after a crash cut it off.
	Tries int `json:"tries"`
}

// Reserve counts req against its budgets and returns the Memory to
// checkpoint before the call is made, with the call pending. A Doctor
// call counts against the run's Doctor budget and, for an infra failure,
// the infra budget, otherwise the phase's budget; a strong call also
// counts against the strong budget. A replan counts against the phase's
// and the run's replan budgets. When a budget is used up the error
// matches ErrBudgetExhausted and names it; while another call is pending
// it matches ErrCallPending. m is never changed.
func Reserve(m Memory, req Request, cfg Config) (Memory, Call, error) {
	if m.Pending != nil {
		return m, Call{}, fmt.Errorf("%w: call %d (%s, phase %d)", ErrCallPending, m.Pending.ID, m.Pending.Kind, m.Pending.Phase)
	}
	if err := budgetLeft(m, req, cfg); err != nil {
		return m, Call{}, err
	}
	p := m.Phase(req.Phase)
	switch req.Kind {
	case CallDoctor:
		if !req.Infra {
			p.DoctorCalls++
		}
	case CallReplan:
		p.Replans++
	}
	c := m.withPhase(p)
	switch req.Kind {
	case CallDoctor:
		c.DoctorCalls++
		if req.Infra {
			c.DoctorInfra++
		}
		if req.Tier == TierStrong {
			c.DoctorStrong++
		}
	case CallReplan:
		c.Replans++
	}
	c.NextCallID++
	if c.NextCallID <= 0 {
		c.NextCallID = 1
	}
	call := Call{Request: req, ID: c.NextCallID, Tries: 1}
	pending := call
	c.Pending = &pending
	return c, call, nil
}

// budgetLeft returns nil when req fits every budget it counts against.
// It counts reservations, not answers: a replan (or Doctor call) that is
// pending, was cut off by a crash or answered with no revision still
// spent its budget, which is what keeps a crash loop from exceeding it.
// How many replans happened is PhaseMemory.Replanned.
func budgetLeft(m Memory, req Request, cfg Config) error {
	l, desc, err := spentLimit(m, req, cfg)
	if err != nil || l == nil {
		return err
	}
	return fmt.Errorf("%w: %s (%d of %d used)", ErrBudgetExhausted, desc, l.Used, l.Max)
}

// spentLimit returns the first budget req counts against that is used
// up, and how Reserve's error describes it; a nil Limit when req fits.
func spentLimit(m Memory, req Request, cfg Config) (*Limit, string, error) {
	p := m.Phase(req.Phase)
	over := func(what, key string, used, limit int) *Limit {
		return &Limit{What: what, Key: key, Used: used, Max: limit}
	}
	switch req.Kind {
	case CallDoctor:
		if m.DoctorCalls >= cfg.MaxDoctorCallsPerRun {
			return over("Doctor calls", "max_doctor_calls_per_run", m.DoctorCalls, cfg.MaxDoctorCallsPerRun), "doctor calls per run", nil
		}
		if req.Infra && m.DoctorInfra >= cfg.MaxDoctorInfraPerRun {
			return over("Doctor infra calls", "max_doctor_infra_per_run", m.DoctorInfra, cfg.MaxDoctorInfraPerRun), "doctor infra calls per run", nil
		}
		if !req.Infra && p.DoctorCalls >= cfg.MaxDoctorCallsPerPhase {
			return over("Doctor calls", "max_doctor_calls_per_phase", p.DoctorCalls, cfg.MaxDoctorCallsPerPhase),
				fmt.Sprintf("doctor calls in phase %d", req.Phase+1), nil
		}
		if req.Tier == TierStrong && m.DoctorStrong >= cfg.MaxDoctorStrongPerRun {
			return over("strong Doctor calls", "max_doctor_strong_per_run", m.DoctorStrong, cfg.MaxDoctorStrongPerRun), "strong doctor calls per run", nil
		}
	case CallReplan:
		if p.Replans >= cfg.MaxReplansPerPhase {
			return over("replans", "max_replans_per_phase", p.Replans, cfg.MaxReplansPerPhase),
				fmt.Sprintf("replans in phase %d", req.Phase+1), nil
		}
		if m.Replans >= cfg.MaxReplansPerRun {
			return over("replans", "max_replans_per_run", m.Replans, cfg.MaxReplansPerRun), "replans per run", nil
		}
	default:
		return nil, "", fmt.Errorf("recovery: unknown call kind %d", int(req.Kind))
	}
	return nil, "", nil
}

// RetryPending is for resume: when m has a pending call that a crash cut
// off, it returns (m with the call's Tries raised to 2, the call, true):
// checkpoint that Memory, then make the call once more. The budget was
// counted when it was reserved and is not counted again. A call that was
// already retried is abandoned: it returns (m without the pending call,
// the call, false), and the call's outcome is "no advice". With nothing
// pending it returns (m, Call{}, false).
func RetryPending(m Memory) (Memory, Call, bool) {
	if m.Pending == nil {
		return m, Call{}, false
	}
	c := m.Clone()
	call := *c.Pending
	if call.Tries >= 2 {
		c.Pending = nil
		return c, call, false
	}
	call.Tries = 2
	p := call
	c.Pending = &p
	return c, call, true
}

// Complete returns m with the pending call id cleared: its outcome is in.
// A replanner's answer goes through CompleteReplan and a Doctor answer
// through CompleteDoctor instead, to be counted.
func Complete(m Memory, id int) (Memory, error) {
	if m.Pending == nil || m.Pending.ID != id {
		return m, fmt.Errorf("%w: %d", ErrNoPendingCall, id)
	}
	c := m.Clone()
	c.Pending = nil
	return c, nil
}

// ReplanOutcome is what a replanner's answer came to.
type ReplanOutcome int

// The outcomes of a replan call. The zero value is ReplanNoRevision.
const (
	ReplanNoRevision ReplanOutcome = iota // the replanner failed, or its answer was no revision
	ReplanRefused                         // a revision CheckRevision refused: it narrows the phase
	ReplanAccepted                        // a revision within the phase's anchor
)

// String returns "no_revision", "refused" or "accepted", as the
// workflow's decision records name them after "replan:".
func (o ReplanOutcome) String() string {
	switch o {
	case ReplanNoRevision:
		return "no_revision"
	case ReplanRefused:
		return "refused"
	case ReplanAccepted:
		return "accepted"
	}
	return fmt.Sprintf("ReplanOutcome(%d)", int(o))
}

// CompleteReplan returns m with the pending replan call id cleared: the
// replanner answered, with outcome out. Only a revision (accepted or
// refused) counts the phase as replanned (PhaseMemory.Replanned), for the
// stuck handler, ChooseTier and status; an accepted one also counts in
// PhaseMemory.ReplansAccepted. The call's budget was spent when it was
// reserved whatever the outcome.
func CompleteReplan(m Memory, id int, out ReplanOutcome) (Memory, error) {
	if m.Pending == nil || m.Pending.ID != id || m.Pending.Kind != CallReplan {
		return m, fmt.Errorf("%w: replan call %d", ErrNoPendingCall, id)
	}
	if out < ReplanNoRevision || out > ReplanAccepted {
		return m, fmt.Errorf("recovery: invalid replan outcome %d", int(out))
	}
	p := m.Phase(m.Pending.Phase)
	if out != ReplanNoRevision {
		p.Replanned++
	}
	if out == ReplanAccepted {
		p.ReplansAccepted++
	}
	c := m.withPhase(p)
	c.Pending = nil
	return c, nil
}

// Advice is the outcome of a Doctor call as the workflow acts on it.
type Advice struct {
	CallID int  `json:"call_id"`
	Tier   Tier `json:"tier"`
	// Action is ActionNone (no advice) when the answer was malformed.
	Action     Action   `json:"action"`
	Confidence float64  `json:"confidence,omitempty"`
	Category   Category `json:"category,omitempty"`
	Rationale  string   `json:"rationale,omitempty"`
	Hint       string   `json:"hint,omitempty"`
	// Malformed says why the answer did not parse; empty when it did.
	Malformed string `json:"malformed,omitempty"`
	// Fatal is set when Category is a fatal error type: Action was made
	// ActionNeedsHuman.
	Fatal bool `json:"fatal,omitempty"`
	// Refused says why the action the Doctor named cannot be carried
	// out (an optional action the profile's doctor_actions leaves out):
	// Action was made ActionNone, no advice. Empty when it can.
	Refused string `json:"refused,omitempty"`
}

// FatalType returns the category of phase index's latest recorded
// failure when it is a fatal error type (Config.FatalTypes: by default
// seed 003's wrong_tech_stack, schema_mismatch and api_contract_wrong,
// which a recovery.fatal rule of that name or the Doctor's diagnosis
// gives a failure): such a failure is not retried, replanned or shown
// to the Doctor; the stuck handler asks the human at once.
func FatalType(m Memory, index int, cfg Config) (Category, bool) {
	p := m.Phase(index)
	if len(p.Failures) == 0 {
		return CatNone, false
	}
	last := p.Failures[len(p.Failures)-1].Category
	return last, cfg.IsFatalType(last)
}

// CompleteDoctor records the Doctor's answer text to the pending call id:
// it parses it (ParseDoctorAnswer), keeps its hint for the next attempt's
// prompt and returns the changed Memory and the advice. An answer whose
// category is a fatal error type (Config.FatalTypes) is advice to ask
// the human, whatever action it named: Advice.Fatal is set and the
// rationale starts with the type. An answer that
// does not parse was still a call (its budget stays spent) and gives
// ActionNone, no advice, with the reason in Advice.Malformed. cfg must be
// validated.
func CompleteDoctor(m Memory, id int, answer string, cfg Config) (Memory, Advice, error) {
	if m.Pending == nil || m.Pending.ID != id || m.Pending.Kind != CallDoctor {
		return m, Advice{}, fmt.Errorf("%w: doctor call %d", ErrNoPendingCall, id)
	}
	call := *m.Pending
	adv := Advice{CallID: id, Tier: call.Tier}
	if a, err := ParseDoctorAnswer(answer); err != nil {
		adv.Malformed = err.Error()
	} else {
		adv.Action, adv.Confidence, adv.Category, adv.Rationale, adv.Hint = a.Action, a.Confidence, a.Category, a.Rationale, a.Hint
		if cfg.IsFatalType(a.Category) {
			// The Doctor diagnosed a fatal error type: whatever it
			// advised, the run stops and asks the human.
			adv.Action, adv.Fatal = ActionNeedsHuman, true
			adv.Rationale = fmt.Sprintf("fatal error type %s (advised %s): %s", a.Category, a.Action, a.Rationale)
		} else if !cfg.ActionAllowed(a.Action) {
			adv.Action = ActionNone
			adv.Refused = fmt.Sprintf("%s is not one of this run's doctor_actions (%s)", a.Action, strings.Join(cfg.DoctorActions, ", "))
		}
	}
	p := m.Phase(call.Phase)
	a := adv
	p.LastAdvice = &a
	if adv.Hint != "" {
		p.Hints = append(p.Hints, adv.Hint)
		if n := len(p.Hints) - cfg.MaxHintsKept; n > 0 {
			p.Hints = slices.Clone(p.Hints[n:])
		}
	}
	c := m.withPhase(p)
	c.Pending = nil
	return c, adv, nil
}

// ChooseTier returns the Doctor tier for phase index, as seed 003's
// Doctor table chooses it from the latest failure's category: the cheap
// model for a low-risk category (Config.LowRisk, infra by default)
// whatever the phase's history; the strong model for a high-risk one
// (Config.HighRisk: build_error, test_failure, tool_error by default)
// while the strong budget lasts. For any other category, the strong
// model for a complex failure (the phase failed in several categories,
// failed Config.ComplexAttempts times or more, or was replanned already:
// a replan answered with a revision, not one merely reserved) while the
// strong budget lasts, the cheap one otherwise.
func ChooseTier(m Memory, index int, cfg Config) Tier {
	p := m.Phase(index)
	var last Category
	if len(p.Failures) > 0 {
		last = p.Failures[len(p.Failures)-1].Category
	}
	if cfg.LowRiskCategory(last) {
		return TierCheap
	}
	complex := cfg.HighRiskCategory(last) || len(p.Categories) >= 2 || p.Attempts >= cfg.ComplexAttempts || p.Replanned > 0
	if complex && m.DoctorStrong < cfg.MaxDoctorStrongPerRun {
		return TierStrong
	}
	return TierCheap
}

// DoctorRequest says whether the Doctor should be called for phase index
// after its latest recorded failure: from the Config.DoctorMinAttempts-th
// failed attempt, or at the first for an infra failure, while the budgets
// it counts against last; never for a failure of a fatal error type,
// which stops the run at once (FatalType). It returns the request to Reserve, or false
// and why not.
func DoctorRequest(m Memory, index int, cfg Config) (Request, bool, string) {
	p := m.Phase(index)
	if len(p.Failures) == 0 {
		return Request{}, false, "no failure recorded"
	}
	last := p.Failures[len(p.Failures)-1]
	if cfg.IsFatalType(last.Category) {
		return Request{}, false, "fatal error type " + last.Category.String()
	}
	req := doctorFor(m, index, cfg)
	if !req.Infra && p.Attempts < cfg.DoctorMinAttempts {
		return Request{}, false, fmt.Sprintf("attempt %d of %d before the doctor", p.Attempts, cfg.DoctorMinAttempts)
	}
	if err := budgetLeft(m, req, cfg); err != nil {
		return Request{}, false, err.Error()
	}
	return req, true, "doctor for " + last.Category.String()
}

// doctorFor is the Doctor call phase index's latest recorded failure
// asks for: an infra call for an infra failure, at the tier ChooseTier
// picks.
func doctorFor(m Memory, index int, cfg Config) Request {
	p := m.Phase(index)
	infra := len(p.Failures) > 0 && p.Failures[len(p.Failures)-1].Category == CatInfra
	return Request{Kind: CallDoctor, Phase: index, Infra: infra, Tier: ChooseTier(m, index, cfg)}
}

// StrongFollowUp says whether the cheap Doctor's advice is too unsure
// (confidence below Config.MinCheapConfidence) so the strong model should
// be asked too, and returns that request (which Reserve counts like any
// other call). A malformed answer gets no follow-up: it is no advice.
func StrongFollowUp(m Memory, index int, adv Advice, infra bool, cfg Config) (Request, bool) {
	if adv.Tier != TierCheap || adv.Action == ActionNone || adv.Confidence >= cfg.MinCheapConfidence {
		return Request{}, false
	}
	req := Request{Kind: CallDoctor, Phase: index, Tier: TierStrong, Infra: infra}
	if budgetLeft(m, req, cfg) != nil {
		return Request{}, false
	}
	return req, true
}
