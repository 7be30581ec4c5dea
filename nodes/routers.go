package nodes

import (
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// The routers are pure functions of the state: no disk, no clock, no
// process. Each sends a run whose Status is terminal (completed, failed,
// halted, rejected, cancelled) to END — through restore_user_changes
// first when the user's uncommitted changes are to be put back.

// finish is where a run whose status is terminal goes: restore when the
// user's changes are still put aside, END otherwise.
func finish(s state.ExecutionState) string {
	if s.Stash.Pending() {
		return NodeRestore
	}
	return graph.END
}

// RouteAfterRestore ends the run.
func RouteAfterRestore(state.ExecutionState) string { return graph.END }

// RouteStart picks the first node: the validator when the run was given a
// plan, the architect otherwise.
func RouteStart(s state.ExecutionState) string {
	switch {
	case s.Status.Terminal():
		return finish(s)
	case s.Plan.Markdown != "":
		return NodeValidator
	}
	return NodeArchitect
}

// RouteAfterArchitect sends the architect's plan to the validator.
func RouteAfterArchitect(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	return NodeValidator
}

// RouteAfterValidator sends a valid plan (one with phases) to approval and
// an invalid one back to the architect; the validator fails the run (a
// terminal status) when the revisions are used up.
func RouteAfterValidator(s state.ExecutionState) string {
	switch {
	case s.Status.Terminal():
		return finish(s)
	case len(s.Plan.Phases) > 0:
		return NodeApproval
	}
	return NodeArchitect
}

// RouteAfterApproval runs the phases of an approved plan, sends a plan
// rejected with feedback back to the architect, and ends a run rejected
// without feedback (the approval node sets the status to rejected).
func RouteAfterApproval(s state.ExecutionState) string {
	switch {
	case s.Status.Terminal():
		return finish(s)
	case s.Approval.Decision == state.DecisionApproved:
		return NodePhase
	case s.Approval.Decision == state.DecisionRejected:
		return NodeArchitect
	}
	return graph.END
}

// RouteAfterPhase reviews the phase: an agent that reported failure is a
// rejected review (the review node does not ask the reviewer). A phase
// that did not start because the run budget is spent goes to recover,
// which asks the human.
func RouteAfterPhase(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	if recoveryStage(s) == stageAsk {
		return NodeRecover // the run budget is spent: a human decides
	}
	return NodeReview
}

// RouteAfterReview is route_after_review of seed 001, over the state the
// review node left (see DecideAfterReview, which made the decision):
//
//   - approved and the last phase → END (the run is completed)
//   - approved → next_task
//   - rejected and under the limit → phased_execution again
//   - rejected at the limit → END (the run is halted)
func RouteAfterReview(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	ps, ok := current(s)
	if !ok {
		return graph.END
	}
	if ps.Status == state.PhaseCompleted {
		if s.LastPhase() {
			return graph.END
		}
		return NodeNextTask
	}
	if recoveryStage(s) != "" {
		return NodeRecover
	}
	return NodePhase
}

// RouteAfterRecover runs recovery's next stage (a call, the stuck
// handler, a question), next_task for a phase the human skipped, or the
// phase's next attempt.
func RouteAfterRecover(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	if recoveryStage(s) != "" {
		return NodeRecover
	}
	if ps, ok := current(s); ok && ps.Status == state.PhaseSkipped {
		return NodeNextTask
	}
	return NodePhase
}

// RouteAfterNextTask runs the next phase.
func RouteAfterNextTask(s state.ExecutionState) string {
	if s.Status.Terminal() {
		return finish(s)
	}
	return NodePhase
}

// Decision is what follows a review.
type Decision int

// The decisions after a review.
const (
	DecideNextPhase Decision = iota + 1 // approved, more phases follow
	DecideDone                          // approved, it was the last phase
	DecideIterate                       // rejected: the same session goes on (task mode)
	DecideRetry                         // rejected: reset, fresh session, next attempt (phased mode)
	DecideHalt                          // rejected at the limit: reset and halt
	// decideRecover: rejected at the limit, and recovery (the Doctor,
	// a replan, the stuck handler) decides what follows in the recover
	// node; the review leaves the tree and the attempt as they are.
	decideRecover
)

func (d Decision) String() string {
	switch d {
	case DecideNextPhase:
		return "next_phase"
	case DecideDone:
		return "done"
	case DecideIterate:
		return "iterate"
	case DecideRetry:
		return "retry"
	case DecideHalt:
		return "halt"
	}
	return "Decision(?)"
}

// DecideAfterReview decides what follows a review of the current phase, by
// counts: s is the state before the review is recorded (its
// review iteration counts the earlier reviews of this attempt).
//
// In task mode a rejected task goes back to the same session until it has
// been reviewed MaxTaskReviewIterations times; in phased mode a rejected
// phase is reset and tried again by a fresh session until it has had
// MaxPhaseAttempts attempts.
func DecideAfterReview(s state.ExecutionState, approved bool) Decision {
	if approved {
		if s.LastPhase() {
			return DecideDone
		}
		return DecideNextPhase
	}
	ps, _ := current(s)
	lim := s.Config.Limits
	if s.Plan.Mode == state.ModeTask {
		if ps.ReviewIteration()+1 >= orDefault(lim.MaxTaskReviewIterations, state.DefaultMaxTaskReviewIterations) {
			return DecideHalt
		}
		return DecideIterate
	}
	if ps.Attempt >= orDefault(lim.MaxPhaseAttempts, state.DefaultMaxPhaseAttempts) {
		return DecideHalt
	}
	return DecideRetry
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// current returns the state of the current phase.
func current(s state.ExecutionState) (state.PhaseState, bool) {
	i := s.Progress.CurrentPhase()
	if i < 0 || i >= len(s.Progress.Phases) {
		return state.PhaseState{}, false
	}
	return s.Progress.Phases[i], true
}
