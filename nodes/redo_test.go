package nodes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

// TestRedoPhase: a phase under way whose session's work (or whose lanes'
// trees and commits) is gone starts again without it, its story counters those of the records in
// the new work tree; an ended run, one without a session and a phase
// with its commit are left as they are.
func TestRedoPhase(t *testing.T) {
	root := t.TempDir()
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1", ExecDir: "docs/gaffer/x"}, Status: state.RunRunning}
	s.Plan.Phases = []state.Phase{{Index: 0}}
	s.Progress.Phases = []state.PhaseState{{Index: 0, Status: state.PhaseRunning, PreCommit: "abc",
		Lanes: []state.LaneProgress{{Tasks: []string{"1"}, Status: state.LaneRunning, Attempt: 1, SessionID: "session-1"}}}}
	s.Progress.Story.Records, s.Progress.Story.Latest = 5, "gone"
	dir := filepath.Join(root, "docs", "gaffer", "x", "story")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	newest := []byte(`{"seq":2}`)
	for name, data := range map[string][]byte{"001-developer-1-1.json": []byte(`{"seq":1}`), "002-developer-1-2.json": newest,
		"notes.txt": []byte("x"), "009-draft.json.tmp": []byte("y")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, ok := RedoPhase(s, root)
	if !ok || got.Progress.Phases[0].HasSession() || got.Progress.Story.Records != 2 || got.Progress.Story.Latest != story.Hash(newest) {
		t.Fatalf("RedoPhase = %v, lanes %+v, story %+v; want redone at record 2", ok, got.Progress.Phases[0].Lanes, got.Progress.Story)
	}
	if s.Progress.Phases[0].Lanes[0].SessionID != "session-1" {
		t.Fatal("RedoPhase changed its input")
	}
	// Lanes at work in trees of their own hold no session yet in the
	// checkpoint the branches started from: their commits are the clone's.
	lanes := s.Clone()
	lanes.Progress.Phases[0].Lanes = []state.LaneProgress{
		{Tasks: []string{"1"}, Status: state.LaneRunning, Attempt: 1, WorkTree: "/a/lane-1", Base: "abc"},
		{Tasks: []string{"2"}, Status: state.LaneDone, Attempt: 1, WorkTree: "/a/lane-2", Base: "abc", Head: "def"}}
	if got, ok := RedoPhase(lanes, root); !ok || got.Progress.Phases[0].InClone() || got.Progress.Phases[0].Lanes[1].Status != state.LanePending {
		t.Errorf("lanes in their own trees: RedoPhase = %v, lanes %+v; want both due again from the pre-phase commit", ok, got.Progress.Phases[0].Lanes)
	}
	for name, st := range map[string]state.ExecutionState{
		"ended": s.WithStatus(state.RunCompleted),
		"no session": func() state.ExecutionState {
			c := s.Clone()
			c.Progress.Phases[0] = c.Progress.Phases[0].FreshLanes()
			return c
		}(),
		"committed": func() state.ExecutionState { c := s.Clone(); c.Progress.Phases[0].PostCommit = "def"; return c }(),
	} {
		if _, ok := RedoPhase(st, root); ok {
			t.Errorf("%s: redone", name)
		}
	}
}
