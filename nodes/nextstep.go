package nodes

import (
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// NextStep says in the user's terms what a run with state s does when the
// workflow's nodes next are due: "phase 2 of 3 (attempt 1)", "review of
// phase 2", "plan approval"; "nothing: the run has ended" when none is.
// A node this view does not know is named as it is.
func NextStep(s state.ExecutionState, next []string) string {
	if len(next) == 0 {
		return "nothing: the run has ended"
	}
	var out []string
	for i := 0; i < len(next); {
		j := i + 1
		for j < len(next) && next[j] == next[i] {
			j++
		}
		step := stepOf(s, next[i])
		if next[i] == NodeLane && j-i > 1 {
			step += fmt.Sprintf(" in %d lanes", j-i)
		}
		out = append(out, step)
		i = j
	}
	return strings.Join(out, ", ")
}

func stepOf(s state.ExecutionState, node string) string {
	n, i := len(s.Plan.Phases), s.Progress.CurrentPhase()
	attempt := 1
	if i >= 0 && i < len(s.Progress.Phases) {
		attempt = max(s.Progress.Phases[i].Attempt, 1)
	}
	switch node {
	case NodeArchitect:
		return "the architect writes the plan"
	case NodeValidator:
		return "the plan's check"
	case NodeApproval:
		return "plan approval"
	case NodePhase, NodeLane:
		if n == 0 {
			return "the first phase"
		}
		return fmt.Sprintf("phase %d of %d (attempt %d)", i+1, n, attempt)
	case NodeCombine:
		return fmt.Sprintf("phase %d's lanes combined (attempt %d)", i+1, attempt)
	case NodeReview:
		return fmt.Sprintf("review of phase %d (attempt %d)", i+1, attempt)
	case NodeNextTask:
		if i+1 < n {
			return fmt.Sprintf("phase %d's summary, then phase %d of %d", i+1, i+2, n)
		}
		return fmt.Sprintf("phase %d's summary (the last phase)", i+1)
	case NodeRecover:
		return fmt.Sprintf("recovery of phase %d", i+1)
	case NodeRestore:
		return "your uncommitted changes put back"
	case graph.START:
		return "the start"
	case graph.END:
		return "the end"
	}
	return node
}
