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
// run starts; with --allow-dirty the user's changes come back on top.
func TestCancelUndoesTheUnfinishedPhase(t *testing.T) {
	bin := gafferBinary(t)
	for _, allowDirty := range []bool{false, true} {
		dir, _, _ := demoRepo(t)
		inputs := t.TempDir()
		plan, script := filepath.Join(inputs, "plan.md"), filepath.Join(inputs, "script.yaml")
		writeTestFile(t, plan, halfPlan)
		writeTestFile(t, script, halfScript)
		args := []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-half00"}
		var u userChanges
		if allowDirty {
			u = makeUserChanges(t, dir)
			args = append(args, "--allow-dirty")
		}
		p := startProc(t, bin, args, "")
		if !waitFor(func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil }) {
			out, _ := p.wait()
			t.Fatalf("phase 2 never started:\n%s", out)
		}
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.wait()
		phase1 := gitOut(t, dir, "rev-parse", "HEAD")
		out, code := startProc(t, bin, []string{"--repo", dir, "cancel"}, "").wait()
		want := "Phase 2's unfinished changes were undone: the work tree is back at " + phase1[:7] + ", the last good commit."
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("allow-dirty %v: cancel: exit %d\n%s\nwant %q", allowDirty, code, out, want)
		}
		if got := gitOut(t, dir, "rev-parse", "HEAD"); got != phase1 {
			t.Fatalf("HEAD moved from phase 1's commit %s to %s", phase1, got)
		}
		for _, f := range []string{"half.txt", "started"} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("allow-dirty %v: the phase's %s is still there: %v", allowDirty, f, err)
			}
		}
		if allowDirty {
			u.check(t, "r-20260101-half00", false)
			continue
		}
		if got := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "" {
			t.Fatalf("the tree is not clean after cancel:\n%s", got)
		}
		// The next run is not refused.
		next := []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-20260101-half01"}
		if out, code := startProc(t, bin, next, "").wait(); code != ExitAwaitingApproval {
			t.Fatalf("the next run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
		}
	}
}
