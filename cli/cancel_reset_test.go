package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const halfPlan = `# Plan: two notes

### Task 1: Write a
Write a.txt.

### Task 2: Write b
Write b.txt.
`

// halfScript's phase 2 writes a new file and edits a tracked one, then
// hangs: a run killed there has a half-done phase in the work tree.
const halfScript = `developer:
  - phase: 1
    actions:
      - write: {path: a.txt, content: "a\n"}
    summary: wrote a
  - phase: 2
    actions:
      - write: {path: half.txt, content: "half\n"}
      - edit: {path: doc.go, old: "package calc", new: "package calc // half done"}
      - write: {path: started, content: "x\n"}
      - run: sleep 60
    summary: never
`

// TestCancelUndoesTheUnfinishedPhase: a run killed in the middle of phase
// 2 and cancelled leaves the tree clean at phase 1's commit, so the next
// run starts; with --allow-dirty the user's changes come back on top. In
// its own work tree the run's branch stays at phase 1's commit, its work
// tree goes, and the user's checkout is untouched. (--allow-dirty is in
// place only: a run in its own work tree puts nothing aside.)
func TestCancelUndoesTheUnfinishedPhase(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	for _, c := range []struct {
		m          runMode
		allowDirty bool
	}{{runModes[0], false}, {runModes[0], true}, {runModes[1], false}} {
		m, allowDirty := c.m, c.allowDirty
		const runID = "r-20260101-half00"
		dir, _, _ := demoRepo(t)
		plan, script := planFiles(t, halfPlan, halfScript)
		args := m.args("--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", runID)
		var u userChanges
		if allowDirty {
			u = makeUserChanges(t, dir)
			args = append(args, "--allow-dirty")
		}
		untouched := m.untouched(t, dir)
		wd := m.workDir(dir, runID)
		p := startProc(t, bin, args, "")
		if !waitFor(func() bool { _, err := os.Stat(filepath.Join(wd, "started")); return err == nil }) {
			out, _ := p.wait()
			t.Fatalf("%s: phase 2 never started:\n%s", m.name, out)
		}
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.wait()
		phase1 := gitOut(t, wd, "rev-parse", "HEAD")
		out, code := startProc(t, bin, []string{"--repo", dir, "cancel"}, "").wait()
		want := "Phase 2's unfinished changes were undone: the work tree is back at " + phase1[:7] + ", the last good commit."
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("%s, allow-dirty %v: cancel: exit %d\n%s\nwant %q", m.name, allowDirty, code, out, want)
		}
		untouched("after cancel")
		if got := gitOut(t, dir, "rev-parse", m.rev(runID)); got != phase1 {
			t.Fatalf("%s: %s moved from phase 1's commit %s to %s", m.name, m.rev(runID), phase1, got)
		}
		if !m.inPlace {
			m.workTreeGone(t, dir, runID)
			continue
		}
		for _, f := range []string{"half.txt", "started"} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("allow-dirty %v: the phase's %s is still there: %v", allowDirty, f, err)
			}
		}
		if allowDirty {
			u.check(t, runID, false)
			continue
		}
		if got := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "" {
			t.Fatalf("the tree is not clean after cancel:\n%s", got)
		}
		// The next run is not refused.
		next := m.args("--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-20260101-half01")
		if out, code := startProc(t, bin, next, "").wait(); code != ExitAwaitingApproval {
			t.Fatalf("the next run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
		}
	}
}
