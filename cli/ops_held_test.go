package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// waitSocket waits until the holder of dir's store answers on its socket.
func waitSocket(t *testing.T, dir string, done <-chan struct{}) control.Info {
	t.Helper()
	cl := control.NewClient(filepath.Join(dir, ".git", "gaffer"))
	for deadline := time.Now().Add(60 * time.Second); ; {
		if info, err := cl.Ping(t.Context()); err == nil {
			return info
		}
		select {
		case <-done:
			t.Fatal("the holder ended before its socket answered")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder's control socket never answered")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runAtPrompt runs gaffer with args in this process, on a terminal
// nobody types into, and returns once the run asks "Approve this plan?":
// its output so far and after, and its end. The run failing first, or
// not asking within two minutes, fails the test.
func runAtPrompt(t *testing.T, args ...string) (*syncBuffer, <-chan error) {
	t.Helper()
	in, stdin := io.Pipe() // nobody types: the prompt waits
	t.Cleanup(func() { stdin.Close() })
	out := new(syncBuffer)
	app := NewWithIO("test", IO{In: in, Out: out, Err: out, Terminal: func() bool { return true }})
	done := make(chan error, 1)
	inProcess.Lock() // see inProcess; the app's goroutine unlocks it
	go func() {
		defer inProcess.Unlock()
		done <- app.RunContext(t.Context(), append([]string{"gaffer"}, args...))
	}()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(out.String(), "Approve this plan?"); {
		select {
		case err := <-done:
			t.Fatalf("run ended before its prompt: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out, done
}

// demoRunAtPrompt makes the demo's repository and runs its plan there as
// runID, up to its prompt (runAtPrompt).
func demoRunAtPrompt(t *testing.T, runID string) (dir string, out *syncBuffer, done <-chan error) {
	t.Helper()
	dir, _, script := demoRepo(t)
	out, done = runAtPrompt(t, "--repo", dir, "run", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script, "--run-id", runID)
	return dir, out, done
}

// A `gaffer run` waiting at its terminal prompt takes the answer of
// `gaffer approve` run in another terminal, and continues the run.
func TestApproveFromSecondProcessAnswersTheRunPrompt(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-prompt"
	dir, out, done := demoRunAtPrompt(t, runID)
	if got, code := gafferCmd(t, bin, "--repo", dir, "approve", "r-other"); code != ExitPrecondition {
		t.Errorf("approve of an unknown run: exit %d, want %d\n%s", code, ExitPrecondition, got)
	}
	got, code := gafferCmd(t, bin, "--repo", dir, "approve", runID)
	if code != 0 || !strings.Contains(got, "Run "+runID+" approved") {
		t.Fatalf("approve: exit %d\n%s", code, got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("the run did not go on after the approval:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "approved from another terminal") {
		t.Errorf("the run's terminal does not say it was approved elsewhere:\n%s", out.String())
	}
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "completed" {
		t.Errorf("status = %s, want completed", v.Status)
	}
}

// `gaffer cancel` in another terminal cancels the run a `gaffer run`
// drives: the run process ends with the cancelled code and the run is
// cancelled in the store.
func TestCancelFromSecondProcessStopsTheRun(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-cancel"
	dir, p := startDemoRun(t, bin, runID, "200ms")
	info := waitSocket(t, dir, p.done)
	if info.Kind != "run" {
		t.Fatalf("ping = %+v", info)
	}
	// Cancel in the middle of the run: one phase done, the next going.
	waitPhaseDone(t, bin, dir, runID, 1, &server{t: t})
	if got, code := gafferCmd(t, bin, "--repo", dir, "approve", runID); code != ExitPrecondition ||
		!strings.Contains(got, "is not waiting for approval") {
		t.Errorf("approve of a running run: exit %d, want %d\n%s", code, ExitPrecondition, got)
	}
	host, _ := os.Hostname()
	held := fmt.Sprintf("run %s is held by pid %d on host %s", runID, p.cmd.Process.Pid, host)
	if got, code := gafferCmd(t, bin, "--repo", dir, "resume", runID); code != ExitLocked || !strings.Contains(got, held) {
		t.Errorf("resume of the held run: exit %d, want %d and %q\n%s", code, ExitLocked, held, got)
	}
	got, code := gafferCmd(t, bin, "--repo", dir, "cancel", runID)
	if code != 0 || strings.TrimSpace(got) != "Run "+runID+" cancelled." {
		t.Fatalf("cancel: exit %d\n%s", code, got)
	}
	out, rc := p.wait()
	if rc != ExitHalted {
		t.Fatalf("run: exit %d, want %d\n%s", rc, ExitHalted, out)
	}
	// Issue 23 item 8a: the cancellation's line alone, no node error of it.
	if !strings.Contains(out, "Run "+runID+" cancelled from another terminal.") || strings.Contains(out, "✗") || strings.Contains(out, "context canceled") {
		t.Errorf("the run's output should say it was cancelled from another terminal and nothing of a failure:\n%s", out)
	}
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "cancelled" {
		t.Errorf("status = %s, want cancelled\n%s", v.Status, out)
	}
	if err := leaseFree(t, dir, runID); err != nil {
		t.Error(err)
	}
	// The tree holds what the run committed, plus at most the cancelled
	// phase's unfinished edits of tracked files: git's own state is sound.
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Logf("work tree after the cancel:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Error("the cancel left git's index.lock behind")
	}
}

// A cancel from another terminal while the run waits at its prompt ends
// the prompt and the run as cancelled.
func TestCancelFromSecondProcessAtThePrompt(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-promptcancel"
	dir, out, done := demoRunAtPrompt(t, runID)
	got, code := gafferCmd(t, bin, "--repo", dir, "cancel", runID)
	if code != 0 || strings.TrimSpace(got) != "Run "+runID+" cancelled." {
		t.Fatalf("cancel: exit %d\n%s", code, got)
	}
	select {
	case err := <-done:
		if ExitCode(err) != ExitHalted {
			t.Fatalf("run: %v (exit %d), want exit %d\n%s", err, ExitCode(err), ExitHalted, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the prompt did not stop:\n%s", out.String())
	}
	if strings.Contains(out.String(), "is waiting for approval of its plan") {
		t.Errorf("the cancelled run says it waits for approval:\n%s", out.String())
	}
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "cancelled" {
		t.Errorf("status = %s, want cancelled", v.Status)
	}
}
