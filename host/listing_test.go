package host

import (
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

func TestEntryViewIsTheState(t *testing.T) {
	for _, st := range []state.RunStatus{state.RunRunning, state.RunCompleted, state.RunFailed, state.RunHalted, state.RunCancelled} {
		for _, stash := range []state.UserStash{{}, {Commit: "abc"}, {Commit: "abc", Restored: true}} {
			snap := graph.Snapshot[state.ExecutionState]{RunID: "r", Seq: 3, Status: graph.StatusDone,
				State: state.ExecutionState{Run: state.RunInfo{ID: "r"}, Status: st, Stash: stash}}
			e, ok, err := ListedEntry(snap)
			if err != nil || !ok {
				t.Fatalf("ListedEntry: %v, %v", ok, err)
			}
			whole := EntriesOf([]RunStatus{{Snapshot: snap}})[0]
			for how, e := range map[string]ListEntry{"summary": e, "whole": whole} {
				if v, stashed := e.view(); v != ViewStatus(snap) || stashed != stash.Pending() {
					t.Errorf("%s of %s, stash %+v: view %s, stashed %v", how, st, stash, v, stashed)
				}
			}
		}
	}
}
