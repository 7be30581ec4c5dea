package nodes

import (
	"context"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestMergeCountsLaneExpansions: the lanes' story expansions join the
// run's count with their results, as their usage does, and a lane run
// again (Fresh, Again) starts from none.
func TestMergeCountsLaneExpansions(t *testing.T) {
	lanes := []state.LaneProgress{{Tasks: []string{"2a"}}, {Tasks: []string{"2b"}}, {Tasks: []string{"2c"}}}
	base := state.ExecutionState{Run: state.RunInfo{ID: "r1"}, Progress: state.Progress{
		Phases: []state.PhaseState{{Index: 0, Status: state.PhaseCompleted}, {Index: 1, Status: state.PhaseRunning, Lanes: lanes}},
		Story:  state.StoryProgress{Expansions: 1}, // phase 1's session expanded once
	}}
	branch := func(k, expansions int) state.ExecutionState {
		l := lanes[k].Clone()
		l.Status, l.Expansions = state.LaneDone, expansions
		return laneResult(base, base.Progress.Phases[1], k, l)
	}
	got, err := Merge(context.Background(), base, []state.ExecutionState{branch(0, 2), branch(2, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Progress.Story.Expansions != 4 {
		t.Errorf("the run's expansions = %d, want 1 + 2 + 1", got.Progress.Story.Expansions)
	}
	l := got.Progress.Phases[1].Lanes[0]
	if l.Fresh("b").Expansions != 0 || l.Again("b").Expansions != 0 {
		t.Error("a lane run again keeps its last session's expansions")
	}
}
