package runview

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/listing"
	"github.com/gaffer-dev/gaffer/state"
)

// listedStates are states of every kind a listing shows: before the plan,
// a phase under way in a run's own work tree, a stopped run with a long
// error, a finished one with its cost, one whose user's changes are still
// kept aside.
func listedStates() map[string]graph.Snapshot[state.ExecutionState] {
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	plan := state.Plan{Markdown: "# Plan\n\n### Task 1: a\n### Task 2: b\n### Task 3: c\n", Mode: state.ModePhased,
		Tasks:  []state.Task{{ID: "1", Title: "a", Type: state.TypeTest}, {ID: "2", Title: "b", Type: state.TypeImpl}, {ID: "3", Title: "c"}},
		Phases: []state.Phase{{Index: 0, TaskIDs: []string{"1", "2"}}, {Index: 1, TaskIDs: []string{"3"}}}}
	review := &state.ReviewResult{Approved: false, Comments: "the test does not fail first"}
	progress := state.Progress{PlanRevision: 1, Phases: []state.PhaseState{
		{Index: 0, Status: state.PhaseCompleted, Attempt: 1, StartedAt: created.Add(time.Minute), CompletedAt: created.Add(5 * time.Minute),
			PreCommit: "1111111111111111111111111111111111111111", PostCommit: "2222222222222222222222222222222222222222",
			Review: &state.ReviewResult{Approved: true}, Written: map[string]string{"a.go": "x"},
			Tasks: []state.TaskState{{TaskID: "1", Status: state.PhaseCompleted}, {TaskID: "2", Status: state.PhaseCompleted}}},
		{Index: 1, Status: state.PhaseRunning, Attempt: 2, StartedAt: created.Add(6 * time.Minute), Review: review,
			Rejections: []state.Rejection{{Attempt: 1, Iteration: 1, Review: *review}},
			Lanes:      []state.LaneProgress{{Tasks: []string{"3"}, Attempt: 2, Iteration: 2}}}}}
	usage := map[string]state.Usage{"developer": {InputTokens: 1200, OutputTokens: 300, CachedTokens: 50, CostUSD: 0.4567891},
		"reviewer": {InputTokens: 100, CostUSD: 0.01}}
	run := state.RunInfo{ID: "r-1", Goal: "a calculator\nthat adds", Slug: "a-calculator", CreatedAt: created, ExecDir: "docs/gaffer/r-1"}
	own := run
	own.WorkTree = "/repo/.git/gaffer.worktrees/r-1"
	snap := func(s state.ExecutionState, next ...string) graph.Snapshot[state.ExecutionState] {
		st := graph.StatusRunning
		if len(next) == 0 {
			st = graph.StatusDone
		}
		return graph.Snapshot[state.ExecutionState]{RunID: "r-1", Seq: 17, Step: 16, State: s, Next: next, Status: st,
			Time: created.Add(7 * time.Minute), Meta: map[string]string{"source": "loop"}}
	}
	long := strings.Repeat("the agent's test run printed ", 40)
	return map[string]graph.Snapshot[state.ExecutionState]{
		"started": snap(state.ExecutionState{Run: run, Status: state.RunRunning}, "architect"),
		"phase under way": snap(state.ExecutionState{Run: own, Plan: plan, Progress: progress, Usage: usage,
			Status: state.RunRunning}, "review"),
		"stopped": snap(state.ExecutionState{Run: run, Plan: plan, Progress: progress, Usage: usage, Status: state.RunRunning,
			Errors: []string{"first", long}}, "phase"),
		"completed": snap(state.ExecutionState{Run: own, Plan: plan, Progress: progress, Usage: usage, Status: state.RunCompleted}),
		"changes kept": snap(state.ExecutionState{Run: run, Plan: plan, Progress: progress, Status: state.RunHalted,
			Stash: state.UserStash{Commit: "3333333333333333333333333333333333333333"}}),
		"changes back": snap(state.ExecutionState{Run: run, Plan: plan, Progress: progress, Status: state.RunFailed,
			Stash: state.UserStash{Commit: "3333333333333333333333333333333333333333", Restored: true}}),
	}
}

// TestListedRunIsTheListsView: a run listed through its summary (what List
// reads) has the view a listing shows of its whole state, and its choice
// (the newest unfinished run, a run prune may delete) comes out the same;
// what the summary leaves out is exactly what `list --json` documents as
// status's alone: the phases' tasks and lanes, pre-phase commits and reviews, all
// but the last error (cut to 400 bytes), recovery's record.
func TestListedRunIsTheListsView(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	for name, full := range listedStates() {
		t.Run(name, func(t *testing.T) {
			listed, ok, err := listing.Listed(full)
			if err != nil || !ok {
				t.Fatalf("Listed: %v, %v", ok, err)
			}
			for _, stopped := range []bool{false, true} {
				rs := host.RunStatus{Snapshot: full, Status: host.ViewStatus(full).String(), Stopped: stopped && host.ViewStatus(full) == state.RunRunning}
				want := RunOf(rs, now)
				rs.Snapshot = listed
				got := RunOf(rs, now)
				row, whole := RowOf(rs), got
				whole.Tree = Tree{}
				if !reflect.DeepEqual(row, whole) {
					t.Errorf("RowOf is not RunOf without its tree:\n%+v\n%+v", row, whole)
				}
				want = listView(want)
				wj, _ := json.MarshalIndent(want, "", "  ")
				gj, _ := json.MarshalIndent(got, "", "  ")
				if string(wj) != string(gj) {
					t.Errorf("stopped %v: list --json through the summary:\n%s\nwant:\n%s", stopped, gj, wj)
				}
				wt, _ := json.Marshal(want.Tree)
				gt, _ := json.Marshal(got.Tree)
				if string(wt) != string(gt) {
					t.Errorf("stopped %v: tree through the summary:\n%s\nwant:\n%s", stopped, gt, wt)
				}
			}
			if a, b := full.State.Status.Terminal(), listed.State.Status.Terminal(); a != b {
				t.Errorf("terminal: %v through the summary, %v in the state", b, a)
			}
			if a, b := full.State.Stash.Pending(), listed.State.Stash.Pending(); a != b {
				t.Errorf("changes still to put back: %v through the summary, %v in the state", b, a)
			}
			if !listed.State.Run.CreatedAt.Equal(full.State.Run.CreatedAt) {
				t.Errorf("created %v through the summary, %v in the state", listed.State.Run.CreatedAt, full.State.Run.CreatedAt)
			}
			sum, _ := json.Marshal(listed.State)
			if len(sum) > 2000 {
				t.Errorf("the summary's state is %d bytes", len(sum))
			}
		})
	}
	// A run waiting on a person is read whole: the question is in its
	// interrupt.
	asking := listedStates()["phase under way"]
	asking.Interrupt = &graph.PendingInterrupt{Node: "recover", Payload: []byte(`{}`)}
	if _, ok, err := listing.Listed(asking); ok || err != nil {
		t.Errorf("Listed of a run on an interrupt: %v, %v; want it read whole", ok, err)
	}
}

// TestEntryRowIsTheRow: a listing's row made from a run's entry (its
// summary) is the row RowOf makes of the run's listed snapshot, stopped
// or not, with the stop's reason kept or not; an entry of a run read
// whole is RowOf's row of it; list's table's brief row, made in a list
// of phases reused from row to row, is the same row.
func TestEntryRowIsTheRow(t *testing.T) {
	var phases []RunPhase // reused by every case's rows, as list's table does
	for name, full := range listedStates() {
		t.Run(name, func(t *testing.T) {
			listed, ok, err := listing.Listed(full)
			if err != nil || !ok {
				t.Fatalf("Listed: %v, %v", ok, err)
			}
			e, ok, err := host.ListedEntry(full)
			if err != nil || !ok {
				t.Fatalf("ListedEntry: %v, %v", ok, err)
			}
			for _, stopped := range []bool{false, true} {
				for _, reason := range []string{"", "killed by the machine"} {
					rs := host.RunStatus{Snapshot: listed, Status: host.ViewStatus(listed).String(),
						Stopped: stopped && host.ViewStatus(listed) == state.RunRunning}
					if rs.Stopped {
						rs.LastError = reason
					}
					e.Status, e.Stopped, e.LastError = rs.Status, rs.Stopped, rs.LastError
					want, got := RowOf(rs), RowOfEntry(&e)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("stopped %v, reason %q: the entry's row:\n%+v\nRowOf's:\n%+v", stopped, reason, got, want)
					}
					whole := host.EntriesOf([]host.RunStatus{rs})[0]
					if got := RowOfEntry(&whole); !reflect.DeepEqual(got, want) {
						t.Errorf("stopped %v: a whole entry's row:\n%+v\nRowOf's:\n%+v", stopped, got, want)
					}
					// list's table: the same row but for the usage by
					// role, and the total it prints in its place.
					brief := BriefRowOfEntry(&e)
					if brief.Usage != nil {
						t.Errorf("the brief row has the usage by role: %v", brief.Usage)
					}
					// list's table makes its rows in turn in one list
					// of phases: the row is the same.
					reused := BriefRowReusing(&e, &phases)
					if !reflect.DeepEqual(reused, brief) {
						t.Errorf("stopped %v: the row made in a reused list of phases:\n%+v\nthe brief row:\n%+v", stopped, reused, brief)
					}
					brief.Usage = want.Usage
					if !reflect.DeepEqual(brief, want) {
						t.Errorf("stopped %v: the brief row:\n%+v\nRowOf's:\n%+v", stopped, brief, want)
					}
					for _, x := range []*host.ListEntry{&e, &whole} {
						if got, want := x.TotalUsage(), state.TotalOf(rs.Snapshot.State.Usage); got != want {
							t.Errorf("the entry's total usage %+v, want %+v", got, want)
						}
					}
				}
			}
		})
	}
	asking := listedStates()["phase under way"]
	asking.Interrupt = &graph.PendingInterrupt{Node: "recover", Payload: []byte(`{}`)}
	if _, ok, err := host.ListedEntry(asking); ok || err != nil {
		t.Errorf("ListedEntry of a run on an interrupt: %v, %v; want it read whole", ok, err)
	}
}

// listView is v as a listing shows it: status --json's view without what
// only status gives (see TestListedRunIsTheListsView).
func listView(v Run) Run {
	phases := make([]RunPhase, len(v.Phases))
	for i, p := range v.Phases {
		phases[i] = RunPhase{Number: p.Number, Status: p.Status, Attempt: p.Attempt, PostCommit: p.PostCommit}
	}
	if v.Phases != nil {
		v.Phases = phases
	}
	if n := len(v.Errors); n > 0 {
		last := v.Errors[n-1]
		if len(last) > 400 {
			last = last[:400]
		}
		v.Errors = []string{last}
	}
	if v.Stopped && v.LastError == v.Tree.LastError && len(v.LastError) > 400 {
		v.LastError = v.LastError[:400]
	}
	v.Recovery = nil
	tree := v.Tree
	tree.Errors = v.Errors
	tree.LastError = v.LastError
	tree.Phases = nil
	for _, p := range v.Tree.Phases {
		p.Tasks, p.Lanes = nil, nil
		tree.Phases = append(tree.Phases, p)
	}
	v.Tree = tree
	return v
}
