package nodes

import (
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// TestNextStepSpeaksThePlansTerms: the step due is named by phase,
// attempt and review, never by the graph's node names.
func TestNextStepSpeaksThePlansTerms(t *testing.T) {
	var s state.ExecutionState
	s.Plan.Phases = make([]state.Phase, 3)
	s.Progress.Phases = make([]state.PhaseState, 3)
	s.Progress.Phases[0].Attempt, s.Progress.Phases[0].Status = 1, state.PhaseCompleted
	s.Progress.Phases[1].Attempt = 2
	for next, want := range map[string]string{
		NodePhase:     "phase 2 of 3 (attempt 2)",
		NodeReview:    "review of phase 2 (attempt 2)",
		NodeNextTask:  "phase 2's summary, then phase 3 of 3",
		NodeApproval:  "plan approval",
		NodeRecover:   "recovery of phase 2",
		NodeLane:      "phase 2 of 3 (attempt 2)",
		NodeCombine:   "phase 2's lanes combined (attempt 2)",
		graph.END:     "the end",
		"custom_node": "custom_node",
	} {
		if got := NextStep(s, []string{next}); got != want {
			t.Errorf("NextStep(%s) = %q, want %q", next, got, want)
		}
	}
	// A phase's lanes are one step in the user's words, however many run.
	if got := NextStep(s, []string{NodeLane, NodeLane, NodeLane}); got != "phase 2 of 3 (attempt 2) in 3 lanes" {
		t.Errorf("NextStep(3 lanes) = %q", got)
	}
	if got := NextStep(s, nil); got != "nothing: the run has ended" {
		t.Errorf("NextStep(none) = %q", got)
	}
	s.Progress.Phases = make([]state.PhaseState, 3) // none started yet: the first phase's first attempt is next
	if got := NextStep(s, []string{NodePhase}); got != "phase 1 of 3 (attempt 1)" {
		t.Errorf("NextStep(phase before its start) = %q", got)
	}
}
