package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// TestTwoStoresOneWorkTree starts two real gaffer processes on one
// repository with different stores: the second is refused with exit 7
// naming the first's pid, host and run, and records no run; once the first
// is SIGKILLed the work tree's lock is free at once, and resuming the
// first run completes it with commits of that run only.
func TestTwoStoresOneWorkTree(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	storeA, storeB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	const runA, runB = "r-20260101-lockaa", "r-20260101-lockbb"
	first := startProc(t, bin, []string{"--repo", dir, "--store", storeA, "run", "--in-place", "--goal", goal, "--script", script,
		"--run-id", runA, "--auto-approve", "--pace", "200ms"}, "")
	waitOutput(t, first, "phase 1")
	head := gitOut(t, dir, "rev-parse", "HEAD")

	second := startProc(t, bin, []string{"--repo", dir, "--store", storeB, "run", "--in-place", "--goal", goal, "--script", script,
		"--run-id", runB, "--auto-approve", "--allow-dirty"}, "")
	out, code := second.wait()
	if code != ExitLocked {
		t.Fatalf("second process: exit %d, want %d\n%s", code, ExitLocked, out)
	}
	host, _ := os.Hostname()
	for _, want := range []string{"pid " + strconv.Itoa(first.cmd.Process.Pid), "host " + host, runA} {
		if !strings.Contains(out, want) {
			t.Errorf("second process's message does not name %q:\n%s", want, out)
		}
	}
	if n := strings.Count(strings.TrimSpace(out), "\n"); n != 0 {
		t.Errorf("want one line, got %d:\n%s", n+1, out)
	}
	if out, code := startProc(t, bin, []string{"--repo", dir, "--store", storeB, "list"}, "").wait(); code != 0 || strings.Contains(out, runB) {
		t.Errorf("the refused run is in its store (exit %d):\n%s", code, out)
	}

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.wait()
	if out, code := startProc(t, bin, []string{"--repo", dir, "--store", storeA, "resume"}, "").wait(); code != 0 {
		t.Fatalf("resume after kill -9: exit %d\n%s", code, out)
	}
	for _, l := range strings.Split(gitOut(t, dir, "log", "--format=%(trailers:key=Gaffer-Run,valueonly)", head+"..HEAD"), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != runA {
			t.Errorf("a commit of run %q in the work tree of run %s", l, runA)
		}
	}
}
