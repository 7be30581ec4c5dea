package cli

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// waitExit waits up to limit for cmd's process (Start'ed, and waited for
// by the goroutine that closes done) to end; it fails the test when it
// does not.
func waitExit(t *testing.T, done <-chan struct{}, limit time.Duration, what string, out func() string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %v:\n%s", what, limit, out())
	}
}

// removeUnderWriter deletes dir while a process still writes in it, as
// the user's rm -rf does: a file the process makes in a directory the
// removal has emptied fails that directory's removal ("directory not
// empty"), and the removal goes on until nothing is left.
func removeUnderWriter(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := os.RemoveAll(dir)
		if err == nil {
			return
		}
		if !errors.Is(err, syscall.ENOTEMPTY) || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

// TestServeExitsOnSIGTERMOnceItsRepositoryIsDeleted: `gaffer serve`
// runs a run; the repository, and with it the store in .git/gaffer, is
// deleted; SIGTERM ends serve within seconds (it used to hang in Badger's
// Close, retrying the memtable's flush), with one line naming what was
// lost.
func TestServeExitsOnSIGTERMOnceItsRepositoryIsDeleted(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	s := startServe(t, bin, dir)
	out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", "r-gone", "--auto-approve", "--pace", "1s")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, "r-gone", "running", s)
	time.Sleep(1500 * time.Millisecond) // a step or two into the run
	deleteUnder(t, dir, "serve", s.cmd.Process, s.done, s.output)
}

// TestRunExitsOnSIGTERMOnceItsRepositoryIsDeleted: the same for `gaffer
// run` in the foreground.
func TestRunExitsOnSIGTERMOnceItsRepositoryIsDeleted(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	cmd := exec.Command(bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--pace", "1s")
	buf, done := startCaptured(t, cmd)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(buf.String(), "phased_execution") {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not reach its first phase:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	deleteUnder(t, dir, "run", cmd.Process, done, buf.String)
}

// deleteUnder removes dir, the repository of a running gaffer process
// (who, ending with done, printing out), as rm -rf does
// (removeUnderWriter), and sends it SIGTERM: it must exit within 20
// seconds, naming in its output what was lost.
func deleteUnder(t *testing.T, dir, who string, p *os.Process, done <-chan struct{}, out func() string) {
	t.Helper()
	removeUnderWriter(t, dir)
	start := time.Now()
	_ = p.Signal(syscall.SIGTERM)
	waitExit(t, done, 20*time.Second, who, out)
	t.Logf("%s exited %v after SIGTERM:\n%s", who, time.Since(start).Round(time.Millisecond), out())
	if !strings.Contains(out(), "was deleted") {
		t.Errorf("%s's output does not name what was lost:\n%s", who, out())
	}
}

// TestASecondSignalEndsServe: serve drains on SIGTERM, waiting for a
// step to reach its checkpoint; a second signal ends it at once.
func TestASecondSignalEndsServe(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	s := startServe(t, bin, dir, "--drain-timeout", "5m")
	out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", "r-slow", "--auto-approve", "--pace", "2m")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, "r-slow", "running", s)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(500 * time.Millisecond)
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	waitExit(t, s.done, 10*time.Second, "serve after a second signal", s.output)
}
