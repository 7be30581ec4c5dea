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
