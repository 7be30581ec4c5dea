package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// decisionSkipPhase is the decision of the question that puts the
// Doctor's skip_phase to the human: only such a question takes a skip
// answer (Answer.Skip).
const decisionSkipPhase = "skip_phase"

// OffersSkip reports whether q offers skipping its phase: the Doctor
// proposed skip_phase, and the human may answer skip besides retry and
// stop.
func (q Question) OffersSkip() bool { return q.Decision == decisionSkipPhase }

// skipUnavailable says why the Doctor cannot propose skip_phase for
// phase index now; "" when it can.
func skipUnavailable(s state.ExecutionState, index int, cfg recovery.Config) string {
	switch {
	case !cfg.ActionAllowed(recovery.ActionSkipPhase):
		return "this run's doctor_actions leave it out"
	case len(s.Plan.Phases) < 2:
		return fmt.Sprintf("phase %d is the plan's only phase: skipping it would leave nothing done (advise stop instead)", index+1)
	}
	return ""
}

// dependents lists the later phases of s's plan whose tasks depend on
// phase index's tasks, directly or through another later task: "phase 3
// (task 3 depends on 2)". A skip leaves them without that work.
func dependents(s state.ExecutionState, index int) []string {
	tasks, err := s.Plan.PhaseTasks(index)
	if err != nil {
		return nil
	}
	gone := map[string]bool{}
	for _, t := range tasks {
		gone[t.ID] = true
	}
	var out []string
	for j := index + 1; j < len(s.Plan.Phases); j++ {
		later, err := s.Plan.PhaseTasks(j)
		if err != nil {
			continue
		}
		var why []string
		for _, t := range later {
			var on []string
			for _, d := range t.DependsOn {
				if gone[d] {
					on = append(on, d)
				}
			}
			if len(on) > 0 {
				why = append(why, fmt.Sprintf("task %s depends on %s", t.ID, strings.Join(on, ", ")))
				gone[t.ID] = true
			}
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("phase %d (%s)", j+1, strings.Join(why, "; ")))
		}
	}
	return out
}

// proposeSkip puts the Doctor's skip_phase to the human: recovery's
// question, with skip among its answers, says what a skip throws away
// and which later phases depend on the phase. Nothing is skipped without
// the human's answer (ask, skipPhase).
func (w *workflow) proposeSkip(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, adv recovery.Advice) (state.ExecutionState, error) {
	why := fmt.Sprintf("the Doctor proposes skipping phase %d: %s. A skip throws the phase's work away (nothing of it is committed) and the run goes on with the next phase", ps.Index+1, adv.Rationale)
	if ps.Index == len(s.Plan.Phases)-1 {
		why = fmt.Sprintf("the Doctor proposes skipping phase %d, the plan's last: %s. A skip throws the phase's work away (nothing of it is committed) and the run ends", ps.Index+1, adv.Rationale)
	}
	if deps := dependents(s, ps.Index); len(deps) > 0 {
		why += fmt.Sprintf(". Later phases depend on it and would run without its work: %s", strings.Join(deps, "; "))
	} else {
		why += ". No later phase's tasks depend on it"
	}
	rs.SkipProposal = rs.Decisions // the doctor:skip_phase record
	return w.toHuman(ctx, s, rs, ps, decisionSkipPhase, why, nil)
}

// skipPhase carries out the human's skip: the decision record says who
// proposed it and who approved it, and the phase is skipped in the state
// — checkpointed by recover's step before next_task resets the tree
// (skipped) and goes on with the next phase. A crash after the answer
// runs this step again with the same answer (the graph keeps it): never a
// retry, never a second question.
func (w *workflow) skipPhase(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, q *Question, fb string) (state.ExecutionState, error) {
	why := fmt.Sprintf("phase %d skipped: proposed by the Doctor (decision %d), approved by the human's answer skip to recovery's question", ps.Index+1, rs.SkipProposal)
	if fb != "" {
		why += ": " + fb
	}
	rs.Stage, rs.Exhausted, rs.SkipProposal = "", false, 0
	rs = w.decide(ctx, s, rs, ps, "human:skip", why)
	ps.Status, ps.CompletedAt = state.PhaseSkipped, w.cfg.Clock().UTC()
	setTasks(&ps, state.PhaseSkipped)
	c, err := withRecovery(s, rs)
	if err != nil {
		return s, err
	}
	if c, err = c.WithPhaseState(ps); err != nil {
		return s, err
	}
	if c, err = w.writeUserRecord(c, ps.Index+1, ps.Attempt, "answered "+q.Decision+" by skipping the phase", fb); err != nil {
		return s, err
	}
	w.attemptFinished(ctx, s, ps, events.OutcomeSkipped)
	return c, nil
}

// skipped is next_task for a phase the human skipped: the tree goes back
// to the pre-phase commit (the failed attempts are kept under their refs,
// the execution directory and the user's files stay), then the next
// phase is prepared; after the last phase the run is completed with its
// record commit, as an approved last phase's. Run again after a crash it
// finds the reset done, or adopts its record commit.
func (w *workflow) skipped(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, error) {
	last := ps.Index == len(s.Plan.Phases)-1
	rec, adopted := "", false
	if last {
		var err error
		if rec, adopted, err = w.find(ctx, s, recordTrailers(s)); err != nil {
			return s, err
		}
	}
	if !adopted {
		if err := w.ensureAtPreCommit(ctx, s, ps); err != nil {
			return s, err
		}
	}
	if err := w.cleanLanes(ctx, s, ps); err != nil {
		return s, err
	}
	if !last {
		return w.preparePhase(ctx, s, ps.Index+1)
	}
	c := w.withStatus(ctx, s, state.RunCompleted)
	if !adopted {
		if err := w.writeRecord(c); err != nil {
			return s, err
		}
		var err error
		if rec, err = w.commit(ctx, c, "gaffer: record of "+c.Run.Slug, recordTrailers(c), ps.Untracked); err != nil {
			return s, err
		}
	}
	if err := w.publish(ctx, c, rec, ps.PreCommit); err != nil {
		return s, err
	}
	return c, nil
}

// SkippedPhases lists the phases (1-based) of s that were skipped.
func SkippedPhases(s state.ExecutionState) []int {
	var out []int
	for _, ps := range s.Progress.Phases {
		if ps.Status == state.PhaseSkipped {
			out = append(out, ps.Index+1)
		}
	}
	return slices.Clip(out)
}
