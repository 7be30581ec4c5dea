package runview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// RunOf is the one view of a run: the status a person is told, its
// branch, the last error of a stopped run, the question it waits on, its
// cost, and a phase tree that agrees with it.
func TestRunOfIsTheWholeView(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1", Goal: "greet", WorkTree: "/w/r-1", CreatedAt: now.Add(-time.Hour)},
		Status: state.RunRunning, Errors: []string{"first", "disk full"},
		Usage: map[string]state.Usage{"developer": {InputTokens: 10, OutputTokens: 5, CostUSD: 0.1234567}}}
	snap := graph.Snapshot[state.ExecutionState]{RunID: "r-1", Seq: 4, Next: []string{"phase"}, State: s}

	v := RunOf(host.RunStatus{Snapshot: snap, Status: "running", Stopped: true}, now)
	if v.Status != "running" || !v.Stopped || v.LastError != "disk full" || v.Branch != host.RunBranch("r-1") || v.WorkTree != "/w/r-1" {
		t.Errorf("stopped run: status %q stopped %v last error %q branch %q tree %q", v.Status, v.Stopped, v.LastError, v.Branch, v.WorkTree)
	}
	if v.CostUSD != 0.123457 || v.InputTokens != 10 || v.Tree.Usage.OutputTokens != 5 || v.Checkpoint != 4 || v.Tree.Checkpoint != 4 {
		t.Errorf("cost %v tokens %d, tree %+v", v.CostUSD, v.InputTokens, v.Tree)
	}
	if v.Asks != "" || v.Question != nil {
		t.Errorf("a running run asks %q %+v", v.Asks, v.Question)
	}
	if v := RunOf(host.RunStatus{Snapshot: snap, Status: "running"}, now); v.Stopped || v.LastError != "" {
		t.Errorf("a run a process runs: stopped %v, last error %q", v.Stopped, v.LastError)
	}

	// Waiting on recovery's question: the status, what it asks, the question.
	q, _ := json.Marshal(nodes.Question{RunID: "r-1", Kind: "recovery", Phase: 2, Decision: "needs_human", Why: "stuck"})
	snap.Interrupt = &graph.PendingInterrupt{Node: nodes.NodeRecover, Payload: q}
	v = RunOf(host.RunStatus{Snapshot: snap, Status: "awaiting_approval"}, now)
	if v.Status != "awaiting_approval" || v.Tree.Status != v.Status || v.Asks != AsksDecision || v.Question == nil || v.Question.Why != "stuck" {
		t.Errorf("asking: status %q tree %q asks %q question %+v", v.Status, v.Tree.Status, v.Asks, v.Question)
	}
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), `"question":{`) || strings.Contains(string(b), `"Tree"`) {
		t.Errorf("JSON: %s", b)
	}
	snap.Interrupt = &graph.PendingInterrupt{Node: nodes.NodeApproval}
	if v := RunOf(host.RunStatus{Snapshot: snap, Status: "awaiting_approval"}, now); v.Asks != AsksApproval || v.Question != nil {
		t.Errorf("approval: asks %q question %+v", v.Asks, v.Question)
	}

	// Queued in serve: its id and status, nothing else.
	v = RunOf(host.RunStatus{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: "r-2"}, Status: host.StatusQueued, Pending: true}, now)
	if !v.Pending || v.RunID != "r-2" || v.Status != host.StatusQueued || v.Tree.RunID != "r-2" || v.Branch != "" {
		t.Errorf("pending: %+v", v)
	}
}

// TestRunOfGivesTheTreeBranchAndLastError: the tree status --watch
// draws carries the run's branch and, stopped, why it stopped.
func TestRunOfGivesTheTreeBranchAndLastError(t *testing.T) {
	var rs host.RunStatus
	rs.Snapshot.RunID = "r-1"
	rs.Snapshot.State.Run = state.RunInfo{ID: "r-1", WorkTree: "/repo/.git/gaffer.worktrees/r-1"}
	rs.Snapshot.State.Status = state.RunRunning
	rs.Stopped, rs.LastError = true, "boom"
	v := RunOf(rs, time.Time{})
	if v.Branch != "gaffer/r-1" || v.LastError != "boom" || v.Tree.Branch != v.Branch || v.Tree.LastError != v.LastError {
		t.Fatalf("RunOf: branch %q, last error %q; tree %q, %q", v.Branch, v.LastError, v.Tree.Branch, v.Tree.LastError)
	}
}

// TestStoppedRunsClockStopsAtItsLastCheckpoint: a run no process runs
// shows its running phase as long as it ran until its last checkpoint,
// marked stopped, however late it is looked at; a run a process runs
// counts on.
func TestStoppedRunsClockStopsAtItsLastCheckpoint(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 42, 0, 0, time.UTC)
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1"}, Status: state.RunRunning,
		Plan: state.Plan{Tasks: []state.Task{{ID: "1", Title: "a"}, {ID: "2", Title: "b"}},
			Phases: []state.Phase{{TaskIDs: []string{"1"}}, {TaskIDs: []string{"2"}}}}}
	s.Progress.Phases = []state.PhaseState{{Index: 0, Status: state.PhaseCompleted, Attempt: 1},
		{Index: 1, Status: state.PhaseRunning, Attempt: 1, StartedAt: start,
			Tasks: []state.TaskState{{TaskID: "2", Status: state.PhaseRunning}}}}
	snap := graph.Snapshot[state.ExecutionState]{RunID: "r-1", Seq: 9, State: s, Time: start.Add(5 * time.Second)}
	for _, later := range []time.Duration{time.Minute, 3 * time.Hour} {
		v := RunOf(host.RunStatus{Snapshot: snap, Status: "running", Stopped: true}, start.Add(later))
		p := v.Tree.Phases[1]
		if p.Duration() != "5s" || !p.Stopped || p.Mark() != MarkStopped || p.Word() != "Stopped" || p.Tasks[0].Mark() != MarkStopped {
			t.Errorf("looked at %v later: phase 2 %+v (%s %s)", later, p, p.Mark(), p.Word())
		}
		if p := v.Tree.Phases[0]; p.Stopped || p.Mark() != MarkDone {
			t.Errorf("a completed phase of a stopped run: %+v", p)
		}
		if !v.Tree.Stopped || !v.Tree.StoppedAt.Equal(snap.Time) || !v.Interrupted {
			t.Errorf("tree stopped %v at %v, interrupted %v", v.Tree.Stopped, v.Tree.StoppedAt, v.Interrupted)
		}
	}
	v := RunOf(host.RunStatus{Snapshot: snap, Status: "running"}, start.Add(time.Minute))
	if p := v.Tree.Phases[1]; p.Duration() != "1m0s" || p.Stopped || p.Mark() != MarkRunning || p.Word() != "Running" {
		t.Errorf("a running run's phase: %+v", p)
	}
	if v := RunOf(host.RunStatus{Snapshot: snap, Status: "running", Stopped: true, LastError: "boom"}, start); v.Interrupted || v.LastError != "boom" {
		t.Errorf("stopped by an error: interrupted %v, last error %q", v.Interrupted, v.LastError)
	}
}

func TestStopWhere(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 42, 5, 0, time.UTC)
	tokyo := time.FixedZone("JST", 9*3600)
	phases := []RunPhase{{Number: 1, Status: "completed", Attempt: 1}, {Number: 2, Status: "running", Attempt: 2}, {Number: 3, Status: "pending"}}
	for _, c := range []struct {
		v    Run
		zone *time.Location
		now  time.Time
		want string
	}{
		{Run{Stopped: true, CurrentPhase: 2, Phases: phases}, time.UTC, at.Add(time.Hour), "at 10:42:05 UTC during phase 2 (attempt 2)"},
		{Run{Stopped: true, CurrentPhase: 2, Phases: phases}, tokyo, at.Add(time.Hour), "at 19:42:05 JST during phase 2 (attempt 2)"},
		{Run{Stopped: true, CurrentPhase: 2, Phases: phases}, time.UTC, at.Add(24 * time.Hour), "at 2026-03-01 10:42:05 UTC during phase 2 (attempt 2)"},
		{Run{Stopped: true, CurrentPhase: 3, Phases: phases}, time.UTC, at, "at 10:42:05 UTC before phase 3 started"},
		{Run{Stopped: true}, time.UTC, at, "at 10:42:05 UTC while the plan was made"},
		{Run{Stopped: false, CurrentPhase: 2, Phases: phases}, time.UTC, at, ""},
	} {
		c.v.Tree.StoppedAt = at
		if got := StopWhere(c.v, c.zone, c.now); got != c.want {
			t.Errorf("StopWhere(phase %d, %s, now %v) = %q, want %q", c.v.CurrentPhase, c.zone, c.now, got, c.want)
		}
	}
	if got := StopWhere(Run{Stopped: true, CurrentPhase: 1, Phases: phases}, time.UTC, at); got != "during phase 1 (attempt 1)" {
		t.Errorf("without a checkpoint time: %q", got)
	}
}

// TestRowCarriesThePhasesRejections: status --json's phases carry the
// reviews that rejected an attempt, kept after a later approval.
func TestRowCarriesThePhasesRejections(t *testing.T) {
	rej := state.Rejection{Attempt: 1, Iteration: 1, Review: state.ReviewResult{Approved: false, Comments: "no doc comment"}}
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1"}, Status: state.RunCompleted,
		Plan: state.Plan{Tasks: []state.Task{{ID: "1", Title: "a"}}, Phases: []state.Phase{{TaskIDs: []string{"1"}}}}}
	s.Progress.Phases = []state.PhaseState{{Status: state.PhaseCompleted, Attempt: 2, Review: &state.ReviewResult{Approved: true}, Rejections: []state.Rejection{rej}}}
	v := RowOf(host.RunStatus{Snapshot: graph.Snapshot[state.ExecutionState]{RunID: "r-1", State: s}, Status: "completed"})
	b, _ := json.Marshal(v)
	if len(v.Phases[0].Rejections) != 1 || !strings.Contains(string(b), `"rejections":[{"attempt":1,"iteration":1,`) || !strings.Contains(string(b), "no doc comment") {
		t.Errorf("phase 1's rejections: %+v\n%s", v.Phases[0].Rejections, b)
	}
}
