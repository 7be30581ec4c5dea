package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// NodeRecover carries out recovery (issue 11): it makes the Doctor's and
// the replanner's reserved calls, runs the stuck handler and asks a human
// when recovery needs one.
const NodeRecover = "recover"

// The stages of recovery a phase can be in between steps: what the
// recover node does next.
const (
	stageCall  = "call"  // make Memory.Pending, reserved and checkpointed
	stageStuck = "stuck" // the phase used today's limits: run the stuck handler
	stageAsk   = "ask"   // interrupt and ask the human (Question)
)

// recoveryState is what the workflow keeps of recovery, as JSON in
// Progress.Recovery: the recovery.Memory and what the workflow does with
// it. Every step that changes it is checkpointed before it acts.
type recoveryState struct {
	Memory recovery.Memory `json:"memory"`
	// Stage is what the recover node does next; "" nothing.
	Stage string `json:"stage,omitempty"`
	// Exhausted: the current phase used its attempts; another one needs
	// recovery's say-so (advice, a replan, an escalation, a human).
	Exhausted bool `json:"exhausted,omitempty"`
	// Escalated lists the phases (indexes) that run with the escalation
	// model; only those phases.
	Escalated []int `json:"escalated,omitempty"`
	// RolledBackTo is the developer's model for the rest of the run once
	// the Doctor's rollback_provider stopped using its failing one (the
	// role's other model, roles.developer.escalation_model); "" before.
	RolledBackTo string `json:"rolled_back_to,omitempty"`
	// Fix is the Doctor's latest fix (execute_fix): pending, run or
	// abandoned (fix.go).
	Fix *fixRun `json:"fix,omitempty"`
	// SkipProposal is the number of the decision record of the Doctor's
	// skip_phase that recovery's question puts to the human; 0 when none.
	SkipProposal int `json:"skip_proposal,omitempty"`
	// Approach holds the replanner's accepted approach, by phase index.
	Approach map[int]string `json:"approach,omitempty"`
	// Question is what the human is asked while Stage is stageAsk.
	Question *Question `json:"question,omitempty"`
	// BudgetWarned: the 80% budget event fired.
	BudgetWarned bool `json:"budget_warned,omitempty"`
	// Granted is the run's spending when a human last answered the
	// budget stop with retry: the budget counts from there (runBudget).
	Granted recovery.Budget `json:"granted,omitempty"`
	// Decisions counts the decision records written; Last is the latest.
	Decisions int             `json:"decisions,omitempty"`
	Last      *DecisionRecord `json:"last,omitempty"`
	// Lanes is, in a phase of several lanes, the lanes the latest failed
	// attempt is about: the Doctor is asked about them, the decision
	// records name them, and an attempt recovery grants runs only them
	// again (state.PhaseState.RedoLanes).
	Lanes *laneFailure `json:"lanes,omitempty"`
}

// laneFailure names the lanes of one failed attempt of a phase of
// several that failed, or that its review named.
type laneFailure struct {
	Phase   int         `json:"phase"` // index into the plan's phases
	Attempt int         `json:"attempt"`
	Lanes   []laneFault `json:"lanes"`
}

// laneFault is one lane a failed attempt is about.
type laneFault struct {
	Lane  int      `json:"lane"` // 1-based
	Tasks []string `json:"tasks"`
}

// label is the lane's label, its tasks: "2" or "2a+2b".
func (f laneFault) label() string { return strings.Join(f.Tasks, "+") }

// lanesOf returns the lanes rs's latest failure is about when it is
// phase ps's attempt's; none otherwise (a phase of one lane, a failure
// of the whole phase's work, another attempt).
func (rs recoveryState) lanesOf(ps state.PhaseState) []laneFault {
	if l := rs.Lanes; l != nil && l.Phase == ps.Index && l.Attempt == ps.Attempt {
		return l.Lanes
	}
	return nil
}

// laneLabels joins the labels of lanes: "2" or "1, 2a+2b".
func laneLabels(lanes []laneFault) string {
	out := make([]string, len(lanes))
	for i, l := range lanes {
		out[i] = l.label()
	}
	return strings.Join(out, ", ")
}

// Question is the interrupt payload of a phase recovery cannot go on with
// alone: a reduce-scope proposal, a Doctor's or the stuck handler's
// needs_human, a narrowing revision, or the Doctor's skip_phase proposal.
// `gaffer approve RUN --decision retry|stop --feedback …` answers it (an
// Answer: Approved is retry), and `--decision skip` the skip_phase one
// (Answer.Skip; OffersSkip).
type Question struct {
	RunID     string   `json:"run_id"`
	Kind      string   `json:"kind"` // "recovery"
	Phase     int      `json:"phase"`
	Attempt   int      `json:"attempt"`
	Decision  string   `json:"decision"` // reduce_scope, needs_human, narrowing_revision, skip_phase
	Why       string   `json:"why"`
	Diagnosis string   `json:"diagnosis,omitempty"` // the latest failure's tail
	Problems  []string `json:"problems,omitempty"`  // a refused revision's problems
	// Lane names the failing lanes of a phase of several ("2", or
	// "1, 2a+2b"); "" when the failure is the whole phase's.
	Lane string `json:"lane,omitempty"`
}

// QuestionKind marks a recovery interrupt's payload.
const QuestionKind = "recovery"

// DecisionRecord is one recovery decision, as the decision record file
// and status show it.
type DecisionRecord struct {
	N        int    `json:"n"`
	Phase    int    `json:"phase"` // 1-based
	Attempt  int    `json:"attempt"`
	Decision string `json:"decision"` // doctor:<action>, replan, revision_accepted, stuck:<decision>, human:<answer>, …
	Why      string `json:"why"`
	// Lane names the lanes (their labels, "2" or "2a+2b", comma-separated)
	// of a phase of several whose failure the decision is about; "" for a
	// phase of one lane, or a decision about the whole phase.
	Lane string `json:"lane,omitempty"`
}

// RecoveryView is what status shows of a run's recovery.
type RecoveryView struct {
	DoctorCalls  int `json:"doctor_calls"`
	DoctorStrong int `json:"doctor_strong"`
	DoctorInfra  int `json:"doctor_infra"`
	// Replans counts the replans that happened: the replanner answered
	// with a revision, accepted or refused.
	Replans int `json:"replans"`
	// ReplansReserved counts the replan calls reserved, the replan budget
	// spent: it also counts one still pending, one cut off by a crash and
	// one answered with no revision.
	ReplansReserved int `json:"replans_reserved"`
	Escalations     int `json:"escalations"`
	// RolledBackTo is the developer's model after the Doctor's
	// rollback_provider, for the rest of the run; "" when none.
	RolledBackTo string          `json:"rolled_back_to,omitempty"`
	Decisions    int             `json:"decisions"`
	Last         *DecisionRecord `json:"last,omitempty"`
}

// Recovery returns what status shows of s's recovery; false when the run
// has none (recovery off, or no phase failed yet).
func Recovery(s state.ExecutionState) (RecoveryView, bool) {
	if len(s.Progress.Recovery) == 0 {
		return RecoveryView{}, false
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return RecoveryView{}, false
	}
	m := rs.Memory
	replanned, _ := m.Replanned()
	return RecoveryView{DoctorCalls: m.DoctorCalls, DoctorStrong: m.DoctorStrong, DoctorInfra: m.DoctorInfra,
		Replans: replanned, ReplansReserved: m.Replans, Escalations: m.Escalations, RolledBackTo: rs.RolledBackTo,
		Decisions: rs.Decisions, Last: rs.Last}, true
}

// PhaseReplans is what became of the replans recovery reserved for one
// phase: its recorded failures, the replans reserved, answered and
// accepted, and the approach its next attempts carry.
type PhaseReplans struct {
	Phase    int                // 1-based
	Failures []recovery.Failure // the latest ones, oldest first
	Reserved int                // replan calls reserved (the budget spent), answered or not
	Revised  int                // of those, the ones the replanner answered with a revision
	Accepted int                // of those, the revisions accepted
	// Approach is what the phase's next attempts carry: an accepted
	// revision's approach, or the human's answer that came after; "" when
	// neither.
	Approach string
}

// ReplansByPhase returns, in phase order, the phases of s for which
// recovery reserved a replan, replanned or not; none when the run has no
// recovery state.
func ReplansByPhase(s state.ExecutionState) []PhaseReplans {
	rs, err := loadRecovery(s)
	if err != nil {
		return nil
	}
	var out []PhaseReplans
	for _, pm := range rs.Memory.Phases {
		if pm.Replans == 0 {
			continue
		}
		out = append(out, PhaseReplans{Phase: pm.Index + 1, Failures: slices.Clone(pm.Failures), Reserved: pm.Replans,
			Revised: pm.Replanned, Accepted: pm.ReplansAccepted, Approach: rs.Approach[pm.Index]})
	}
	slices.SortFunc(out, func(a, b PhaseReplans) int { return a.Phase - b.Phase })
	return out
}

// The recovery events (graph.Emit); metrics counts them.
const (
	EventRecoveryFailure  = events.EventRecoveryFailure
	EventRecoveryDecision = events.EventRecoveryDecision
)

func recoveryOn(s state.ExecutionState) bool { return s.Config.Recovery != nil }

// loadRecovery decodes s's recovery state (the zero one when none).
func loadRecovery(s state.ExecutionState) (recoveryState, error) {
	var rs recoveryState
	if len(s.Progress.Recovery) == 0 {
		return rs, nil
	}
	if err := strictJSON(s.Progress.Recovery, &rs); err != nil {
		return rs, fmt.Errorf("nodes: recovery state: %w", err)
	}
	return rs, nil
}

// withRecovery returns s with rs as its recovery state.
func withRecovery(s state.ExecutionState, rs recoveryState) (state.ExecutionState, error) {
	b, err := json.Marshal(rs)
	if err != nil {
		return s, fmt.Errorf("nodes: recovery state: %w", err)
	}
	c := s
	c.Progress.Recovery = b
	return c, nil
}

// recoveryStage is the stage of s's recovery, for the routers.
func recoveryStage(s state.ExecutionState) string {
	if len(s.Progress.Recovery) == 0 {
		return ""
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return stageStuck // the recover node reports the error
	}
	return rs.Stage
}

// recoveryConfig is the run's recovery.Config: the defaults, with the
// profile's fatal categories, thresholds, budgets and rules (risk
// categories, message similarity, fatal error types) as the run stored
// them when it started.
func recoveryConfig(s state.ExecutionState) (recovery.Config, error) {
	var cfg recovery.Config
	var t state.RecoveryTuning
	if s.Config.Recovery != nil {
		for _, f := range s.Config.Recovery.Fatal {
			cfg.Fatal = append(cfg.Fatal, recovery.FatalRule{Name: recovery.Category(f.Name), Pattern: f.Pattern})
		}
		t = s.Config.Recovery.RecoveryTuning
		cfg = cfg.WithRules(s.Config.Recovery.RecoveryRules)
	}
	v, err := cfg.Apply(t)
	if err != nil {
		return v, fmt.Errorf("nodes: %w", err)
	}
	return v, nil
}

// budgetOf is the run's spending against its budget.
func budgetOf(s state.ExecutionState) recovery.Budget {
	u := s.TotalUsage()
	return recovery.Budget{MaxCostUSD: s.Config.Limits.MaxRunCostUSD, SpentUSD: u.CostUSD,
		MaxTokens: s.Config.Limits.MaxRunTokens, SpentTokens: u.InputTokens + u.OutputTokens}
}

// inputOf is what recovery classifies a failed attempt by: the agent's
// error (command output and all), the driver's error, the review.
func inputOf(ps state.PhaseState, rr state.ReviewResult) recovery.Input {
	var in recovery.Input
	switch {
	case ps.ErrorKind == errorKindDriver:
		in.Driver, in.DriverError = recovery.DriverOther, ps.Error
	case ps.Error != "":
		in.AgentFailed, in.AgentError = true, ps.Error
	default:
		r := rr
		in.Review = &r
	}
	return in
}

// errorKindDriver marks a phase error that is the driver's (the session
// could not run), not the agent's.
const errorKindDriver = "driver"

// driverFailure turns a developer session's driver error into a failed
// attempt when recovery is on, so that the Doctor sees an infra failure
// instead of the run failing; a cancelled ctx, a script without an entry
// and a provider that is unavailable (agent.ErrUnavailable: the machine's
// fault, which stops the run resumably and spends nothing) stay errors.
func driverFailure(ctx context.Context, s state.ExecutionState, err error) bool {
	return recoveryOn(s) && ctx.Err() == nil && errors.Is(err, agent.ErrModel) && !errors.Is(err, agent.ErrUnavailable)
}

// failed records a rejected attempt of phase ps (decision says whether an
// attempt is left) and decides what recovery does next: a replan or a
// Doctor call, reserved here so that the step's checkpoint holds the
// reservation before the recover node makes the call; the stuck handler
// when no attempt is left or the failure is of a fatal error type. It returns the state with the failure recorded
// and whether the recover node runs next.
func (w *workflow) failed(ctx context.Context, s state.ExecutionState, ps state.PhaseState, rr state.ReviewResult, exhausted bool) (state.ExecutionState, bool, error) {
	rs, err := loadRecovery(s)
	if err != nil {
		return s, false, err
	}
	cfg, err := recoveryConfig(s)
	if err != nil {
		return s, false, err
	}
	i := ps.Index
	if rs.Memory.Phase(i).Anchor == nil {
		// The plan cannot change after its approval, so the anchor frozen
		// at the phase's first failure is the one the approval saw.
		a, err := recovery.FreezeAnchor(s.Plan, i)
		if err != nil {
			return s, false, fmt.Errorf("nodes: phase %d: %w", i+1, err)
		}
		rs.Memory = recovery.WithAnchor(rs.Memory, i, a)
	}
	m, f := recovery.RecordFailure(rs.Memory, i, ps.Attempt, inputOf(ps, rr), cfg)
	rs.Memory = m
	rs.Lanes = nil
	if ls := faultLanes(ps, rr); len(ls) > 0 {
		rs.Lanes = &laneFailure{Phase: i, Attempt: ps.Attempt, Lanes: ls}
	}
	graph.Emit(ctx, EventRecoveryFailure, events.RecoveryFailure{Phase: i + 1, Attempt: ps.Attempt, Category: string(f.Category), Fingerprint: f.Fingerprint})
	rs.Exhausted = exhausted
	rs.Stage = ""
	if d := recovery.ShouldReplan(m, i, cfg); d.Replan && w.has(agent.RoleReplanner, s) {
		if m2, _, err := recovery.Reserve(m, recovery.Request{Kind: recovery.CallReplan, Phase: i}, cfg); err == nil {
			rs.Memory, rs.Stage = m2, stageCall
			rs = w.decide(ctx, s, rs, ps, "replan", d.Reason)
		}
	}
	if rs.Stage == "" {
		if req, ok, _ := recovery.DoctorRequest(m, i, cfg); ok && w.has(agent.RoleDoctor, s) {
			if m2, _, err := recovery.Reserve(m, req, cfg); err == nil {
				rs.Memory, rs.Stage = m2, stageCall
			}
		}
	}
	if _, fatal := recovery.FatalType(m, i, cfg); rs.Stage == "" && (exhausted || fatal) {
		// A fatal error type goes to the stuck handler at once: it asks
		// the human (ShouldReplan and DoctorRequest refused it).
		rs.Stage = stageStuck
	}
	if rs.Stage == stageCall {
		w.reserved.Store(s.Run.ID, rs.Memory.Pending.ID)
	}
	c, err := withRecovery(s, rs)
	return c, rs.Stage != "", err
}

// has reports whether the run has a driver for an optional recovery
// role; a script without its entries has none, which an event says.
func (w *workflow) has(role agent.Role, s state.ExecutionState) bool {
	d, err := w.cfg.Drivers(role, s.Config)
	if err != nil || d == nil {
		w.cfg.Logger.Info("recovery: no "+string(role)+" for this run", "err", err)
		return false
	}
	return true
}

// recover is the recover node: it runs the stage the state is in.
func (w *workflow) recover(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	ps, ok := current(s)
	if !ok {
		return s, ErrNoPhase
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return s, err
	}
	cfg, err := recoveryConfig(s)
	if err != nil {
		return s, err
	}
	ps = recoveredAttempt(s, rs, ps)
	switch rs.Stage {
	case stageCall:
		return w.call(ctx, s, rs, ps, cfg)
	case stageStuck:
		return w.stuck(ctx, s, rs, ps, cfg)
	case stageAsk:
		return w.ask(ctx, s, rs, ps)
	}
	return s, fmt.Errorf("nodes: recover: phase %d has no recovery stage", ps.Index+1)
}

// recoveredAttempt is ps with the attempt recovery is about: the one
// that failed. When the phase had attempts left, review had already
// counted the next one, which has not run (phased mode; a task's review
// iteration keeps its attempt); the decision records, the question and a
// halt name the failed one. nextAttempt grants a new attempt only to a
// phase that used its own, so nothing writes the lowered count back
// but a halt, which counts the attempts that ran.
func recoveredAttempt(s state.ExecutionState, rs recoveryState, ps state.PhaseState) state.PhaseState {
	if rs.Question != nil && rs.Question.Decision == decisionRunBudget {
		return ps // asked before the attempt ran, not after one failed
	}
	if !rs.Exhausted && ps.Attempt > 1 && s.Plan.Mode != state.ModeTask {
		ps.Attempt--
	}
	return ps
}

// call makes the reserved call. A call this process did not reserve was
// cut off by a crash: it is made exactly once more (its retry is
// checkpointed first), and abandoned as "no advice" after that.
func (w *workflow) call(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, cfg recovery.Config) (state.ExecutionState, error) {
	p := rs.Memory.Pending
	if p == nil {
		rs.Stage = ""
		return w.afterAdvice(ctx, s, rs, ps, cfg, recovery.Advice{})
	}
	if id, ok := w.reserved.Load(s.Run.ID); !ok || id != p.ID {
		m, call, again := recovery.RetryPending(rs.Memory)
		rs.Memory = m
		if !again {
			rs = w.decide(ctx, s, rs, ps, call.Kind.String()+":abandoned", "the call was cut off twice by a crash; no advice")
			return w.afterAdvice(ctx, s, rs, ps, cfg, recovery.Advice{})
		}
		w.reserved.Store(s.Run.ID, call.ID)
		return withRecovery(s, rs) // checkpoint the retry, then make it
	}
	w.reserved.Delete(s.Run.ID)
	if p.Kind == recovery.CallReplan {
		return w.replan(ctx, s, rs, ps, cfg)
	}
	return w.doctor(ctx, s, rs, ps, cfg)
}

// recoveryDriver returns what a recovery session (the Doctor's, the
// replanner's) starts from: the run's repository and the driver of role,
// named name in the error. A factory that gives no driver is ErrNoDriver.
func (w *workflow) recoveryDriver(s state.ExecutionState, role agent.Role, name string) (*workspace.Repo, agent.Driver, error) {
	repo, err := w.repo(s)
	if err != nil {
		return nil, nil, err
	}
	d, err := w.cfg.Drivers(role, s.Config)
	if err != nil || d == nil {
		return nil, nil, fmt.Errorf("nodes: %s driver: %w", name, errors.Join(err, ErrNoDriver))
	}
	return repo, d, nil
}

// doctor asks the Doctor about the phase's latest failure and acts on
// its advice.
func (w *workflow) doctor(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, cfg recovery.Config) (state.ExecutionState, error) {
	repo, d, err := w.recoveryDriver(s, agent.RoleDoctor, "doctor")
	if err != nil {
		return s, err
	}
	p := *rs.Memory.Pending
	ac := s.Config.Agents.Doctor
	model := ac.Model
	if p.Tier == recovery.TierStrong && ac.StrongModel != "" {
		model = ac.StrongModel
	}
	pm := rs.Memory.Phase(ps.Index)
	sess := agent.Session{Role: agent.RoleDoctor, RunID: s.Run.ID, Phase: ps.Index + 1, Attempt: lastAttempt(pm),
		Iteration: 1, Prompt: w.doctorPrompt(s, pm, rs.lanesOf(ps)), Dir: repo.Root(), Model: model, Tier: p.Tier.String(),
		Tools: []string{agent.ToolRead, agent.ToolList, agent.ToolGrep}}
	rep, err := w.session(ctx, d, sess)
	if err != nil {
		return s, err
	}
	c := w.usage(ctx, s, agent.RoleDoctor, rep.Usage)
	answer := rep.Output
	if rep.Status == agent.StatusFailed {
		answer = "" // a failed session is no answer: counted, no advice
	}
	m, adv, err := recovery.CompleteDoctor(rs.Memory, p.ID, answer, cfg)
	if err != nil {
		return s, fmt.Errorf("nodes: %w", err)
	}
	rs.Memory = m
	graph.Emit(ctx, events.EventDoctorCall, events.DoctorCall{Phase: ps.Index + 1, Tier: p.Tier.String(), Action: adv.Action.String()})
	why := adv.Rationale
	if adv.Malformed != "" {
		why = "the answer did not parse: " + adv.Malformed
	}
	if adv.Refused != "" {
		why = "refused: " + adv.Refused + "; " + why
	}
	rs = w.decide(ctx, c, rs, ps, "doctor:"+adv.Action.String(), why)
	switch adv.RefusedAction {
	case recovery.ActionExecuteFix, recovery.ActionSkipPhase:
		rs = w.decide(ctx, c, rs, ps, adv.RefusedAction.String()+":refused", adv.Refused)
	}
	if req, ok := recovery.StrongFollowUp(m, ps.Index, adv, p.Infra, cfg); ok {
		if m2, call, err := recovery.Reserve(m, req, cfg); err == nil {
			rs.Memory, rs.Stage = m2, stageCall
			w.reserved.Store(s.Run.ID, call.ID)
			return withRecovery(c, rs)
		}
	}
	return w.afterAdvice(ctx, c, rs, ps, cfg, adv)
}

// afterAdvice carries out the Doctor's advice (or none).
func (w *workflow) afterAdvice(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, cfg recovery.Config, adv recovery.Advice) (state.ExecutionState, error) {
	switch adv.Action {
	case recovery.ActionReplan:
		if w.has(agent.RoleReplanner, s) {
			if m, call, err := recovery.Reserve(rs.Memory, recovery.Request{Kind: recovery.CallReplan, Phase: ps.Index}, cfg); err == nil {
				rs.Memory, rs.Stage = m, stageCall
				w.reserved.Store(s.Run.ID, call.ID)
				return withRecovery(s, rs)
			}
		}
	case recovery.ActionEscalateModel:
		// Without an escalation model there is nothing to escalate to:
		// the advice is no advice.
		if canEscalate(s, rs) && rs.Memory.Phase(ps.Index).Escalations < cfg.MaxEscalationsPerPhase {
			return w.escalate(ctx, s, rs, ps, "the Doctor advised a stronger model: "+adv.Rationale)
		}
	case recovery.ActionNeedsHuman:
		return w.toHuman(ctx, s, rs, ps, "needs_human", "the Doctor: "+adv.Rationale, nil)
	case recovery.ActionStop:
		return w.stop(ctx, s, rs, ps, "")
	case recovery.ActionRetryWithHint:
		return w.nextAttempt(ctx, s, rs, ps)
	case recovery.ActionRollbackProvider:
		from, to, whyNot := rollbackModel(s, rs, ps.Index)
		if whyNot == "" {
			rs.RolledBackTo = to
			rs = w.decide(ctx, s, rs, ps, "rollback_provider", fmt.Sprintf("the Doctor: %s (the developer's model %s is not used again in this run; %s from now on)",
				adv.Rationale, from, to))
			return w.nextAttempt(ctx, s, rs, ps)
		}
		// The prompt said the action was not available: no advice.
		rs = w.decide(ctx, s, rs, ps, "rollback_provider:refused", whyNot)
	case recovery.ActionExecuteFix:
		var granted bool
		if rs, granted = w.grantFix(ctx, s, rs, ps, cfg, adv); granted {
			return w.nextAttempt(ctx, s, rs, ps)
		}
	case recovery.ActionSkipPhase:
		whyNot := skipUnavailable(s, ps.Index, cfg)
		if whyNot == "" {
			return w.proposeSkip(ctx, s, rs, ps, adv)
		}
		// The prompt said the action was not available: no advice.
		rs = w.decide(ctx, s, rs, ps, "skip_phase:refused", whyNot)
	}
	if !rs.Exhausted {
		return w.nextAttempt(ctx, s, rs, ps)
	}
	return w.stuck(ctx, s, rs, ps, cfg)
}

// stuck runs the stuck handler on a phase that used today's limits.
func (w *workflow) stuck(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, cfg recovery.Config) (state.ExecutionState, error) {
	sit := recovery.SituationOf(rs.Memory, ps.Index, cfg)
	sit.Budget = budgetOf(s)
	sit.Iteration = ps.Attempt
	sit.IterationCap = orDefault(s.Config.Limits.MaxPhaseAttempts, state.DefaultMaxPhaseAttempts) + maxExtraAttempts
	// A run without a replanner cannot replan: the handler decides
	// without it, so the decision recorded is the one carried out.
	sit.RunReplansLeft = sit.RunReplansLeft && w.has(agent.RoleReplanner, s)
	sit.EscalationModel = canEscalate(s, rs)
	dec, why := recovery.Stuck(sit, cfg)
	graph.Emit(ctx, events.EventStuckDecision, events.StuckDecision{Phase: ps.Index + 1, Decision: dec.String(), Why: why})
	rs = w.decide(ctx, s, rs, ps, "stuck:"+dec.String(), why)
	switch dec {
	case recovery.StuckReplan:
		if w.has(agent.RoleReplanner, s) {
			if m, call, err := recovery.Reserve(rs.Memory, recovery.Request{Kind: recovery.CallReplan, Phase: ps.Index}, cfg); err == nil {
				rs.Memory, rs.Stage = m, stageCall
				w.reserved.Store(s.Run.ID, call.ID)
				return withRecovery(s, rs)
			}
		}
	case recovery.StuckEscalateModel:
		return w.escalate(ctx, s, rs, ps, why)
	case recovery.StuckReduceScope, recovery.StuckNeedsHuman:
		return w.toHuman(ctx, s, rs, ps, dec.String(), why, nil)
	case recovery.StuckStop:
		if len(sit.Spent(cfg)) > 0 {
			// A used-up budget stopped the run: its halt message names it
			// and the key to raise. Otherwise the halt is recovery off's.
			return w.stop(ctx, s, rs, ps, why)
		}
	}
	return w.stop(ctx, s, rs, ps, "")
}

// stop halts the run as review does at the limit (w.halt), and reports
// the attempt recover decided. why, when not empty, is the stuck
// handler's reason to stop, which the halt message ends with.
func (w *workflow) stop(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, why string) (state.ExecutionState, error) {
	rs.Stage, rs.Exhausted = "", false
	c, err := withRecovery(s, rs)
	if err != nil {
		return s, err
	}
	if c, err = w.halt(ctx, c, ps, why); err != nil {
		return s, err
	}
	outcome := events.OutcomeHalted
	if ps.Error != "" {
		outcome = events.OutcomeFailed
	}
	w.attemptFinished(ctx, s, ps, outcome)
	return c, nil
}

// attemptFinished emits phase_finished for an attempt whose outcome the
// recover node decided (review left it to recover).
func (w *workflow) attemptFinished(ctx context.Context, s state.ExecutionState, ps state.PhaseState, outcome string) {
	graph.Emit(ctx, events.EventPhaseFinished, events.PhaseFinished{
		Phase: ps.Index + 1, Attempt: ps.Attempt, Iteration: ps.ReviewIteration(), Outcome: outcome,
		Duration: max(w.cfg.Clock().Sub(ps.StartedAt), 0), Lanes: max(len(ps.Lanes), 1),
	})
}

// maxExtraAttempts bounds the attempts recovery may add to a phase's
// max_phase_attempts (the stuck handler's iteration cap); the budgets
// bound them already (2 Doctor calls, 1 replan, 1 escalation a phase).
const maxExtraAttempts = 4

// escalate gives the phase another attempt with the escalation model.
func (w *workflow) escalate(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, why string) (state.ExecutionState, error) {
	rs.Memory = recovery.RecordEscalation(rs.Memory, ps.Index)
	if !slices.Contains(rs.Escalated, ps.Index) {
		rs.Escalated = append(rs.Escalated, ps.Index)
	}
	rs = w.decide(ctx, s, rs, ps, "escalate_model", why+" (model "+s.Config.Agents.Developer.EscalationModel+", phase "+fmt.Sprint(ps.Index+1)+" only)")
	return w.nextAttempt(ctx, s, rs, ps)
}

// toHuman stages a question for the human: the next step interrupts.
func (w *workflow) toHuman(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, decision, why string, problems []string) (state.ExecutionState, error) {
	pm := rs.Memory.Phase(ps.Index)
	diag := ""
	if n := len(pm.Failures); n > 0 {
		diag = excerpt(pm.Failures[n-1].Tail)
	}
	rs.Stage = stageAsk
	rs.Question = &Question{RunID: s.Run.ID, Kind: QuestionKind, Phase: ps.Index + 1, Attempt: ps.Attempt, Decision: decision,
		Why: why, Diagnosis: diag, Problems: problems, Lane: laneLabels(rs.lanesOf(ps))}
	c, err := withRecovery(s, rs)
	if err != nil {
		return s, err
	}
	answers := "retry|stop"
	if rs.Question.OffersSkip() {
		answers = "retry|stop|skip"
	}
	body := fmt.Sprintf("phase %d, attempt %d: %s: %s\nanswer: gaffer approve %s --decision %s", ps.Index+1, ps.Attempt, decision, why, s.Run.ID, answers)
	return w.notice(c, state.NoticeNeedsHuman, fmt.Sprintf("gaffer: run %s needs a human", s.Run.ID), body), nil
}

// ask interrupts with the staged question; the answer retries the phase
// (with the feedback as a hint) or stops the run at its last good commit.
func (w *workflow) ask(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState) (state.ExecutionState, error) {
	raw, err := graph.Interrupt(ctx, *rs.Question)
	if err != nil {
		var ie *graph.InterruptError
		if errors.As(err, &ie) {
			graph.Emit(ctx, events.EventRunStatus, events.RunStatus{From: state.RunRunning.String(), To: state.RunAwaitingApproval.String()})
		}
		return s, err
	}
	var ans Answer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return s, fmt.Errorf("%w: %s: %w", ErrBadAnswer, raw, err)
	}
	graph.Emit(ctx, events.EventRunStatus, events.RunStatus{From: state.RunAwaitingApproval.String(), To: state.RunRunning.String()})
	q := rs.Question
	rs.Question = nil
	fb := strings.TrimSpace(ans.Feedback)
	if ans.Skip {
		if !q.OffersSkip() {
			return s, fmt.Errorf("%w: skip answers only a question about the Doctor's skip_phase, not %s", ErrBadAnswer, q.Decision)
		}
		return w.skipPhase(ctx, s, rs, ps, q, fb)
	}
	if !ans.Approved {
		rs = w.decide(ctx, s, rs, ps, "human:stop", orText(fb, "the human stopped the run after "+q.Decision))
		why := ""
		if q.Decision == decisionRunBudget || q.Decision == recovery.StuckReduceScope.String() {
			why = q.Why // the budget the human stopped at, and its key
		}
		return w.stop(ctx, s, rs, ps, why)
	}
	if q.Decision == decisionRunBudget {
		rs.Granted = budgetOf(s)
	}
	rs = w.decide(ctx, s, rs, ps, "human:retry", orText(fb, "the human asked for another attempt after "+q.Decision))
	if fb != "" {
		if rs.Approach == nil {
			rs.Approach = map[int]string{}
		}
		rs.Approach[ps.Index] = "The human's answer to " + q.Decision + ": " + fb
	}
	c, err := w.writeUserRecord(s, ps.Index+1, ps.Attempt, "answered "+q.Decision+" with another attempt", fb)
	if err != nil {
		return s, err
	}
	return w.nextAttempt(ctx, c, rs, ps)
}

// nextAttempt sends the phase to its next attempt: when it had used its
// attempts, recovery grants one more.
func (w *workflow) nextAttempt(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState) (state.ExecutionState, error) {
	rs.Stage = ""
	c := s
	if rs.Exhausted {
		w.attemptFinished(ctx, s, ps, events.OutcomeRetried)
		rs.Exhausted = false
		ps.Status, ps.Attempt = state.PhaseRetrying, ps.Attempt+1
		setTasks(&ps, state.PhaseRetrying)
		// Only the lanes the failure is about run again, each in a
		// fresh session; the lanes that succeeded keep their work.
		var review state.ReviewResult
		if ps.Review != nil {
			review = *ps.Review
		}
		ps = ps.RedoLanes(atFault(review))
		var err error
		if c, err = c.WithPhaseState(ps); err != nil {
			return s, err
		}
	}
	return withRecovery(c, rs)
}

// decide records a decision: rs.Last, the decision record file in the
// execution directory (one file per decision, named by its number, so a
// step run again writes the same file) and an event.
func (w *workflow) decide(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, decision, why string) recoveryState {
	rs.Decisions++
	rec := DecisionRecord{N: rs.Decisions, Phase: ps.Index + 1, Attempt: ps.Attempt, Decision: decision, Why: why,
		Lane: laneLabels(rs.lanesOf(ps))}
	rs.Last = &rec
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := w.write(s, decisionPath(s, rec.N), string(b)+"\n"); err != nil {
		w.cfg.Logger.Warn("recovery: decision record not written", "err", err)
	}
	graph.Emit(ctx, EventRecoveryDecision, events.RecoveryDecision{Phase: rec.Phase, Lane: rec.Lane, Decision: decision, Why: why})
	w.cfg.Logger.Info("recovery decision", "phase", rec.Phase, "lane", rec.Lane, "attempt", rec.Attempt, "decision", decision, "why", why)
	return rs
}

// decisionPath is the n-th decision record's file.
func decisionPath(s state.ExecutionState, n int) string {
	return path.Join(s.Run.ExecDir, "recovery", fmt.Sprintf("decision-%03d.json", n))
}

// checkBudget fires the 80% budget event once per run.
func (w *workflow) checkBudget(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	if !recoveryOn(s) {
		return s, nil
	}
	cfg, err := recoveryConfig(s)
	if err != nil {
		return s, err
	}
	b := budgetOf(s)
	if !b.Warn(cfg) {
		return s, nil
	}
	rs, err := loadRecovery(s)
	if err != nil || rs.BudgetWarned {
		return s, err
	}
	rs.BudgetWarned = true
	graph.Emit(ctx, events.EventBudgetWarning, events.BudgetWarning{Remaining: b.Remaining()})
	msg := fmt.Sprintf("run %s has spent %s of its budget (%s)", s.Run.ID, recovery.Percent(b.SpentFraction()), b.Figures())
	w.cfg.Notice(msg)
	c, err := withRecovery(s, rs)
	if err != nil {
		return s, err
	}
	return w.notice(c, state.NoticeBudgetWarning, "gaffer: "+msg, s.Run.Goal), nil
}

// replan asks the replanner for a revised approach within the phase's
// anchor and checks it mechanically: accepted, the next attempt carries
// it; narrowing, the human is asked; unparseable, no revision.
func (w *workflow) replan(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, cfg recovery.Config) (state.ExecutionState, error) {
	repo, d, err := w.recoveryDriver(s, agent.RoleReplanner, "replanner")
	if err != nil {
		return s, err
	}
	p := *rs.Memory.Pending
	pm := rs.Memory.Phase(ps.Index)
	if pm.Anchor == nil {
		return s, fmt.Errorf("nodes: replan of phase %d: no goal anchor", ps.Index+1)
	}
	if err := pm.Anchor.Verify(); err != nil {
		return s, fmt.Errorf("nodes: replan of phase %d: %w", ps.Index+1, err)
	}
	sess := agent.Session{Role: agent.RoleReplanner, RunID: s.Run.ID, Phase: ps.Index + 1, Attempt: lastAttempt(pm),
		Iteration: 1, Prompt: ReplanPrompt(s, pm), Dir: repo.Root(),
		Tools: []string{agent.ToolRead, agent.ToolList, agent.ToolGrep}}
	rep, err := w.session(ctx, d, sess)
	if err != nil {
		return s, err
	}
	c := w.usage(ctx, s, agent.RoleReplanner, rep.Usage)
	rev, perr := parseRevision(rep.Output)
	if rep.Status == agent.StatusFailed {
		perr = fmt.Errorf("the replanner failed: %s", rep.Error)
	}
	out, problems := recovery.ReplanNoRevision, []string(nil)
	if perr == nil {
		out = recovery.ReplanAccepted
		if c, rs, problems, err = w.checkRevision(ctx, c, rs, ps, *pm.Anchor, rev.Tasks, rev.Approach); err != nil {
			return s, err
		}
		if len(problems) > 0 {
			out = recovery.ReplanRefused
		}
	}
	// Only a revision counts as a replan (for the stuck handler, the
	// Doctor's tier and status); the reservation spent the budget anyway.
	m, err := recovery.CompleteReplan(rs.Memory, p.ID, out)
	if err != nil {
		return s, fmt.Errorf("nodes: %w", err)
	}
	rs.Memory = m
	graph.Emit(ctx, events.EventReplan, events.Replan{Phase: ps.Index + 1, Outcome: out.String()})
	switch out {
	case recovery.ReplanNoRevision:
		rs = w.decide(ctx, c, rs, ps, "replan:no_revision", perr.Error())
		return w.afterAdvice(ctx, c, rs, ps, cfg, recovery.Advice{})
	case recovery.ReplanRefused:
		why := "the revised approach narrows the phase: " + strings.Join(problems, "; ")
		rs = w.decide(ctx, c, rs, ps, "replan:refused", why)
		return w.toHuman(ctx, c, rs, ps, "narrowing_revision", why, problems)
	}
	if rs.Approach == nil {
		rs.Approach = map[int]string{}
	}
	rs.Approach[ps.Index] = rev.Approach
	rs = w.decide(ctx, c, rs, ps, "replan:accepted", rev.Approach)
	return w.nextAttempt(ctx, c, rs, ps)
}

// revision is the replanner's answer.
type revision struct {
	Approach string       `json:"approach"`
	Tasks    []state.Task `json:"tasks"`
}

// parseRevision reads the replanner's strict JSON answer.
func parseRevision(text string) (revision, error) {
	var r revision
	t := strings.TrimSpace(text)
	t = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(t, "```json"), "```"), "```")
	if err := strictJSON([]byte(strings.TrimSpace(t)), &r); err != nil {
		return r, fmt.Errorf("the revision is not the JSON asked for: %w", err)
	}
	if strings.TrimSpace(r.Approach) == "" {
		return r, errors.New("the revision has no approach")
	}
	return r, nil
}

func lastAttempt(pm recovery.PhaseMemory) int {
	if n := len(pm.Failures); n > 0 {
		return pm.Failures[n-1].Attempt
	}
	return 0
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// DoctorPrompt asks the Doctor about phase pm's failures, in strict JSON.
// It offers execute_fix only to a workflow that runs commands (doctorPrompt).
func DoctorPrompt(s state.ExecutionState, pm recovery.PhaseMemory) string {
	return (&workflow{}).doctorPrompt(s, pm, nil)
}

// doctorPrompt is DoctorPrompt about the lanes of a phase of several
// that failed (or that the review named), when lanes are given: their
// tasks alone stand for the phase's, since the other lanes succeeded
// and keep their work. It offers the optional actions w can carry out.
func (w *workflow) doctorPrompt(s state.ExecutionState, pm recovery.PhaseMemory, lanes []laneFault) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the Doctor of a coding workflow. Phase %d of the plan keeps failing. Diagnose why, and say what to do next.\n\n", pm.Index+1)
	switch {
	case len(lanes) > 0:
		b.WriteString(lanesSection(s, pm, lanes))
	case pm.Anchor != nil:
		b.WriteString(pm.Anchor.Text() + "\n")
	}
	fmt.Fprintf(&b, "## Failed attempts (%d, categories: %s)\n\n", pm.Attempts, joinCats(pm.Categories))
	for _, f := range pm.Failures {
		fmt.Fprintf(&b, "### Attempt %d: %s\n\n```\n%s\n```\n\n", f.Attempt, f.Category, f.Tail)
	}
	if cfg, err := recoveryConfig(s); err == nil && len(cfg.FatalTypes) > 0 {
		fmt.Fprintf(&b, "If retrying cannot fix the failure because it is one of these fatal error types, name the type as the category and the run stops to ask the human: %s.\n\n", joinCats(cfg.FatalTypes))
	}
	actions := []string{`"retry_with_hint"`, `"replan"`, `"escalate_model"`, `"needs_human"`, `"stop"`}
	rs, _ := loadRecovery(s)
	cfg, _ := recoveryConfig(s)
	if !cfg.ActionAllowed(recovery.ActionRollbackProvider) {
		b.WriteString("rollback_provider is not available: this run's doctor_actions leave it out.\n\n")
	} else if from, to, whyNot := rollbackModel(s, rs, pm.Index); whyNot != "" {
		fmt.Fprintf(&b, "rollback_provider is not available: %s.\n\n", whyNot)
	} else {
		actions = append(actions, `"rollback_provider"`)
		fmt.Fprintf(&b, "rollback_provider stops using the developer's model (%s) for the rest of the run and retries with its other model, %s: advise it when the model itself keeps failing (its provider errs, or it cannot do the work).\n\n",
			from, to)
	}
	if whyNot := skipUnavailable(s, pm.Index, cfg); whyNot != "" {
		fmt.Fprintf(&b, "skip_phase is not available: %s.\n\n", whyNot)
	} else {
		actions = append(actions, `"skip_phase"`)
		fmt.Fprintf(&b, "skip_phase proposes to the human skipping phase %d: its work is thrown away and the run goes on with the next phase. Only the human decides; advise it when the phase cannot succeed and the rest of the plan is worth more without it.\n\n", pm.Index+1)
	}
	command := ""
	if whyNot := w.fixUnavailable(s, rs, pm.Index, cfg); whyNot != "" {
		fmt.Fprintf(&b, "execute_fix is not available: %s.\n\n", whyNot)
	} else {
		actions = append(actions, `"execute_fix"`)
		command = `, "command": "<execute_fix only: one shell command>"`
		fmt.Fprintf(&b, "execute_fix runs your own shell command (the answer's command) once, in the work tree, confined as the developer's commands are and without API keys, at the start of the next attempt; its changes stay and its output goes into the developer's prompt: advise it when one command fixes what the developer keeps tripping on (a missing dependency, generated code, a formatter). At most %d per phase.\n\n", cfg.MaxExecuteFixPerPhase)
	}
	fmt.Fprintf(&b, `Answer with one JSON object and nothing else:
{"action": %s,
 "confidence": 0..1, "category": "<the failure's category>", "rationale": "<why>", "hint": "<for the next attempt>"%s}
`, strings.Join(actions, " | "), command)
	return b.String()
}

// lanesSection tells the Doctor which lanes of the phase failed, and
// their tasks: "Lane 2 (task 2: bee)".
func lanesSection(s state.ExecutionState, pm recovery.PhaseMemory, lanes []laneFault) string {
	var b strings.Builder
	names := make([]string, len(lanes))
	var ids []string
	for i, l := range lanes {
		ts := make([]string, len(l.Tasks))
		for j, id := range l.Tasks {
			ts[j] = id
			if t, ok := s.Plan.Task(id); ok {
				ts[j] = id + ": " + t.Title
			}
		}
		word := "task"
		if len(ts) > 1 {
			word = "tasks"
		}
		names[i] = fmt.Sprintf("Lane %s (%s %s)", l.label(), word, strings.Join(ts, "; "))
		ids = append(ids, l.Tasks...)
	}
	b.WriteString("## The failing lanes\n\n")
	fmt.Fprintf(&b, "Phase %d runs its tasks as lanes, each a session of its own in its own work tree. %s failed; the phase's other lanes succeeded and keep their work, and only the failing lanes run again. Diagnose the failing lanes.\n\n",
		pm.Index+1, strings.Join(names, " and "))
	if pm.Anchor != nil {
		a := *pm.Anchor
		a.Tasks = slices.DeleteFunc(slices.Clone(a.Tasks), func(t recovery.AnchorTask) bool { return !slices.Contains(ids, t.ID) })
		b.WriteString(a.Text() + "\n")
	}
	return b.String()
}

// rollbackModel is what the Doctor's rollback_provider would do about
// phase index's failing model: the model the phase's developer failed
// with (from) and the one it gives the developer for the rest of the run
// (to), the role's other model: roles.developer.escalation_model, or the
// role's model when the phase ran escalated. whyNot, when not empty,
// says why there is none: the role names no other model, or the run
// rolled back already.
func rollbackModel(s state.ExecutionState, rs recoveryState, index int) (from, to, whyNot string) {
	dev := s.Config.Agents.Developer
	switch {
	case rs.RolledBackTo != "":
		return "", "", "the run rolled the developer back to " + rs.RolledBackTo + " already; it has no other model left"
	case slices.Contains(rs.Escalated, index):
		if dev.Model == "" || dev.Model == dev.EscalationModel {
			return "", "", fmt.Sprintf("phase %d runs with the escalation model %s and the developer names no other model (roles.developer.model in gaffer.yaml)", index+1, dev.EscalationModel)
		}
		return dev.EscalationModel, dev.Model, ""
	case dev.EscalationModel == "" || dev.EscalationModel == dev.Model:
		return "", "", "the developer has no other model to fall back to (set roles.developer.escalation_model in gaffer.yaml)"
	}
	return orText(dev.Model, "the driver's default"), dev.EscalationModel, ""
}

// canEscalate reports whether the run has a model to escalate a phase
// to: an escalation model the developer does not run with already (after
// a rollback it runs with it everywhere).
func canEscalate(s state.ExecutionState, rs recoveryState) bool {
	return s.Config.Agents.Developer.EscalationModel != "" && rs.RolledBackTo == ""
}

// ReplanPrompt asks the replanner for a revised approach of phase pm,
// with its frozen goal anchor as a hard constraint.
func ReplanPrompt(s state.ExecutionState, pm recovery.PhaseMemory) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the replanner of a coding workflow. Phase %d keeps failing the same way. Revise how it is done.\n\n", pm.Index+1)
	if pm.Anchor != nil {
		b.WriteString(pm.Anchor.Constraint() + "\n")
	}
	b.WriteString("## The failures\n\n")
	for _, f := range pm.Failures {
		fmt.Fprintf(&b, "### Attempt %d: %s\n\n```\n%s\n```\n\n", f.Attempt, f.Category, f.Tail)
	}
	b.WriteString(`Answer with one JSON object and nothing else:
{"approach": "<how the next attempt does the tasks>",
 "tasks": [{"id": "...", "title": "...", "type": "...", "files": ["..."], "description": "..."}]}
The tasks deliver the anchor's tasks: split, merged or reordered if the approach needs it, with every
name, file and test kept in a task of its kind, nothing dropped, put off or narrowed.
`)
	return b.String()
}

func joinCats(cs []recovery.Category) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return strings.Join(out, ", ")
}

// recoveryPrompt is what a phase's prompt carries of recovery: the
// replanner's accepted approach (or the human's answer) and the Doctor's
// latest hint; "" when there is neither.
func recoveryPrompt(s state.ExecutionState, ps state.PhaseState) string {
	if len(s.Progress.Recovery) == 0 {
		return ""
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return ""
	}
	var b strings.Builder
	if a := rs.Approach[ps.Index]; a != "" {
		fmt.Fprintf(&b, "\n## Revised approach\n\n%s\n", a)
	}
	if h := rs.Memory.Hint(ps.Index); h != "" {
		fmt.Fprintf(&b, "\n## The Doctor's hint\n\n%s\n", h)
	}
	b.WriteString(fixPrompt(rs, ps))
	return b.String()
}

// escalatedModel is the model phase ps's developer runs with: the
// model the Doctor's rollback_provider gave the rest of the run, the
// escalation model once the stuck handler or the Doctor escalated the
// phase, "" (the role's model) otherwise.
func escalatedModel(s state.ExecutionState, ps state.PhaseState) string {
	if len(s.Progress.Recovery) == 0 {
		return ""
	}
	rs, err := loadRecovery(s)
	if err == nil && rs.RolledBackTo != "" {
		return rs.RolledBackTo
	}
	if err != nil || !slices.Contains(rs.Escalated, ps.Index) {
		return ""
	}
	return s.Config.Agents.Developer.EscalationModel
}
