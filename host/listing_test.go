package host

import (
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host/listing"
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
			// What choosing a run reads (entries without status): the
			// summary's head alone.
			head := ListEntry{RunID: e.RunID, Seq: e.Seq, Summary: new(listing.Summary), Record: e.Record}
			if !listing.ReadHead(*e.Record, head.Summary) {
				t.Fatalf("%s, stash %+v: the head is not read", st, stash)
			}
			for how, e := range map[string]ListEntry{"summary": e, "head": head, "whole": whole} {
				if v, stashed := e.view(); v != ViewStatus(snap) || stashed != stash.Pending() {
					t.Errorf("%s of %s, stash %+v: view %s, stashed %v", how, st, stash, v, stashed)
				}
			}
		}
	}
}
