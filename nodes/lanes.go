package nodes

import (
	"slices"

	"github.com/gaffer-dev/gaffer/state"
)

// soleLane is the lane of a phase of one lane, which works in the run's
// tree: its first (and only) lane, or a new one of all the phase's
// tasks when it has none yet.
func soleLane(s state.ExecutionState, ps state.PhaseState) state.LaneProgress {
	if len(ps.Lanes) > 0 {
		return ps.Lanes[0].Clone()
	}
	var tasks []string
	if ps.Index >= 0 && ps.Index < len(s.Plan.Phases) {
		tasks = slices.Clone(s.Plan.Phases[ps.Index].TaskIDs)
	}
	return state.LaneProgress{Tasks: tasks, Attempt: ps.Attempt, Base: ps.PreCommit}
}

// withSoleLane returns ps with l as its one lane.
func withSoleLane(ps state.PhaseState, l state.LaneProgress) state.PhaseState {
	ps.Lanes = []state.LaneProgress{l}
	return ps
}
