package nodes

import (
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// notice returns s with a notice of event in its outbox (state.WithNotice),
// dated by the workflow's clock. The node that makes the change a notice
// tells of appends it, so both are in the step's one checkpoint; a node
// run again after a crash appends it again from the same input, never
// twice. The approval and recovery's question are interrupts, whose
// checkpoint keeps the state before the interrupting node: their
// notices are appended by the step before (the validator, toHuman).
func (w *workflow) notice(s state.ExecutionState, event, title, body string) state.ExecutionState {
	return s.WithNotice(event, w.cfg.Clock().UTC(), title, body)
}

// statusNotice is the notice of a run whose status became st, if any.
func (w *workflow) statusNotice(s state.ExecutionState, st state.RunStatus) state.ExecutionState {
	var event string
	switch st {
	case state.RunCompleted:
		event = state.NoticeCompleted
	case state.RunHalted:
		event = state.NoticeHalted
	case state.RunFailed:
		event = state.NoticeFailed
	default:
		return s
	}
	body := s.Run.Goal
	if st != state.RunCompleted && len(s.Errors) > 0 {
		body = firstLines(s.Errors[len(s.Errors)-1], 4)
	}
	return w.notice(s, event, fmt.Sprintf("gaffer: run %s %s", s.Run.ID, st), body)
}

// approvalNotice is the notice of a valid plan that waits for approval.
func (w *workflow) approvalNotice(s state.ExecutionState) state.ExecutionState {
	if s.Config.AutoApprove || s.Status.Terminal() || len(s.Plan.Phases) == 0 {
		return s
	}
	body := fmt.Sprintf("%s\nplan revision %d: %d phase(s); approve or reject it: gaffer approve %s", s.Run.Goal,
		s.Progress.PlanRevision, len(s.Plan.Phases), s.Run.ID)
	return w.notice(s, state.NoticeAwaitingApproval, fmt.Sprintf("gaffer: run %s is waiting for approval", s.Run.ID), body)
}

// firstLines is text's first n lines.
func firstLines(text string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(text), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
