package nodes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

// TestRedoPhase: a phase under way whose session's work is gone starts
// again without its session, its story counters those of the records in
// the new work tree; an ended run, one without a session and a phase
// with its commit are left as they are.
func TestRedoPhase(t *testing.T) {
	root := t.TempDir()
	s := state.ExecutionState{Run: state.RunInfo{ID: "r-1", ExecDir: "docs/gaffer/x"}, Status: state.RunRunning}
	s.Plan.Phases = []state.Phase{{Index: 0}}
	s.Progress.Phases = []state.PhaseState{{Index: 0, Status: state.PhaseRunning, PreCommit: "abc"}}
	s.Progress.DriverSessionID = "session-1"
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
	if !ok || got.Progress.DriverSessionID != "" || got.Progress.Story.Records != 2 || got.Progress.Story.Latest != story.Hash(newest) {
		t.Fatalf("RedoPhase = %v, session %q, story %+v; want redone at record 2", ok, got.Progress.DriverSessionID, got.Progress.Story)
	}
	if s.Progress.DriverSessionID != "session-1" {
		t.Fatal("RedoPhase changed its input")
	}
	for name, st := range map[string]state.ExecutionState{
		"ended":      s.WithStatus(state.RunCompleted),
		"no session": func() state.ExecutionState { c := s.Clone(); c.Progress.DriverSessionID = ""; return c }(),
		"committed":  func() state.ExecutionState { c := s.Clone(); c.Progress.Phases[0].PostCommit = "def"; return c }(),
	} {
		if _, ok := RedoPhase(st, root); ok {
			t.Errorf("%s: redone", name)
		}
	}
}
