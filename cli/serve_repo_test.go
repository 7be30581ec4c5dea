package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSubmitFromAnotherRepositoryIsRefused starts serve in repository A
// and submits, to the store it holds, a run from repository B (`gaffer
// --repo B --store A/.git/gaffer submit`). serve executes every run in
// its own work tree: the run meant for B was planned, committed and
// recorded in A without a word. The submit must be refused (exit 8),
// naming both repositories, and nothing queued or committed in either.
func TestSubmitFromAnotherRepositoryIsRefused(t *testing.T) {
	bin := gafferBinary(t)
	a, b, aux := t.TempDir(), t.TempDir(), t.TempDir()
	gitRepo(t, a, map[string]string{"README.md": "a\n"})
	gitRepo(t, b, map[string]string{"README.md": "b\n"})
	plan, script := filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
	writeTestFile(t, plan, "# Plan: one\n\n### Task 1: Write x\n\nWrite x.\n")
	writeTestFile(t, script, "developer:\n  - phase: 1\n    actions:\n      - write: {path: x.txt, content: \"x\\n\"}\n    summary: x\nreviewer: []\n")
	s := startServe(t, bin, a)
	defer s.stop(syscall.SIGTERM)
	headA, headB := gitOut(t, a, "rev-parse", "HEAD"), gitOut(t, b, "rev-parse", "HEAD")

	out, code := gafferCmd(t, bin, "--repo", b, "--store", filepath.Join(a, ".git", "gaffer"), "submit", "--plan", plan,
		"--script", script, "--auto-approve", "--run-id", "r-20260101-otherr")
	t.Logf("submit from B: exit %d: %s", code, strings.TrimSpace(out))
	if code != ExitPrecondition || !strings.Contains(out, a) || !strings.Contains(out, b) {
		t.Errorf("submit from another repository: exit %d, want %d naming both repositories:\n%s", code, ExitPrecondition, out)
	}
	if out, code := gafferCmd(t, bin, "--repo", a, "status", "r-20260101-otherr"); code != ExitPrecondition {
		t.Errorf("the refused run exists in serve's store (status exit %d):\n%s", code, out)
	}
	if got := gitOut(t, a, "rev-parse", "HEAD"); got != headA {
		t.Errorf("A's HEAD moved from %s to %s", headA, got)
	}
	if got := gitOut(t, b, "rev-parse", "HEAD"); got != headB {
		t.Errorf("B's HEAD moved from %s to %s", headB, got)
	}
}
