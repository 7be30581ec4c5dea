package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// referenceRun runs the demo uninterrupted and returns its tree and commit
// subjects (on its branch). Summaries and execution-state.json name
// commits: the same tree needs the same commit dates, in this run and the
// one compared with it, so bin is datedBin's.
func referenceRun(t *testing.T, bin, runID string) (tree, log string) {
	t.Helper()
	dir, _, script := demoRepo(t)
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script,
		"--run-id", runID, "--auto-approve")
	if code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, out)
	}
	rev := runRev(t, dir)
	return gitOut(t, dir, "rev-parse", rev+"^{tree}"), gitOut(t, dir, "log", "--format=%s", rev)
}

// leaseFree reports whether the run's lease is free, counting every holder
// as alive: nil when an acquire by another owner succeeds (it is then
// released), a *checkpoint.LeaseHeldError when it is held.
func leaseFree(t *testing.T, dir, runID string) error {
	t.Helper()
	st, err := badger.Open(filepath.Join(dir, ".git", "gaffer"), badger.Options{
		ProcessAlive: func(int) bool { return true },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host, _ := os.Hostname()
	l, err := st.Acquire(t.Context(), runID, checkpoint.Owner{ID: "lease-check", PID: os.Getpid(), Host: host}, time.Minute)
	if err != nil {
		return err
	}
	return st.Release(t.Context(), l)
}

// waitPhaseDone polls until the run has completed at least n phases and
// is still running.
func waitPhaseDone(t *testing.T, bin, dir, runID string, n int, s *server) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		v, ok := statusIfAny(t, bin, dir, runID)
		if !ok { // the process is up, its run's first checkpoint not yet
			time.Sleep(20 * time.Millisecond)
			continue
		}
		done := 0
		for _, p := range v.Phases {
			if p.Status == "completed" {
				done++
			}
		}
		if done >= n && v.Status == "running" {
			return
		}
		if v.Status == "completed" {
			t.Fatalf("run completed before it could be interrupted; slow it down (--pace)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s did not reach phase %d\n%s", runID, n+1, s.output())
}

// datedBin is the gaffer binary with GAFFER_REPRODUCIBLE_DATES=1 in its
// environment (binWithEnv).
func datedBin(t *testing.T) string {
	t.Helper()
	return binWithEnv(t, gafferBinary(t), "GAFFER_REPRODUCIBLE_DATES=1")
}

func TestServeKill9ResumesOnRestart(t *testing.T) {
	t.Parallel()
	bin := datedBin(t)
	const runID = "r-20260101-kill9s"
	wantTree, wantLog := referenceRun(t, bin, runID)

	dir, s := serveDemoRun(t, bin, runID, "40ms")
	waitPhaseDone(t, bin, dir, runID, 1, s)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
	// The killed serve's lease is still in the store (the next process
	// takes it over because its holder is dead, not because it was freed).
	var held *checkpoint.LeaseHeldError
	if err := leaseFree(t, dir, runID); !errors.As(err, &held) {
		t.Fatalf("lease after kill -9: %v, want it still held", err)
	}
	sock := filepath.Join(dir, ".git", "gaffer.sock")
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("want the killed serve's socket left behind: %v", err)
	}
	// A stale socket does not stop status: it opens the store itself.
	v, stderr := statusOf(t, bin, dir, runID)
	if v.Status != "running" {
		t.Fatalf("status after kill -9 = %s\n%s", v.Status, stderr)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("stale socket still there after a command held the store: %v", err)
	}

	// The next serve finds the run in its journal and finishes it.
	s2 := startServe(t, bin, dir)
	waitStatus(t, bin, dir, runID, "completed", s2)
	if code := s2.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, s2.output())
	}
	if !strings.Contains(s2.output(), `"recovered":1`) {
		t.Errorf("restarted serve did not report the recovered run:\n%s", s2.output())
	}
	rev := runRev(t, dir) // the run's branch
	if rev == "HEAD" {
		t.Fatal("the run has no branch of its own")
	}
	if got := gitOut(t, dir, "rev-parse", rev+"^{tree}"); got != wantTree {
		t.Fatalf("tree %s, want %s\n%s", got, wantTree, gitOut(t, dir, "log", "--stat", rev))
	}
	if got := gitOut(t, dir, "log", "--format=%s", rev); got != wantLog {
		t.Fatalf("commits\n%s\nwant\n%s", got, wantLog)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("tree not clean:\n%s", got)
	}
}

func TestServeSIGTERMDrainsAndReleasesTheLease(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-drain1"
	dir, s := serveDemoRun(t, bin, runID, "40ms")
	waitPhaseDone(t, bin, dir, runID, 1, s)
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d after SIGTERM\n%s", code, s.output())
	}
	if !strings.Contains(s.output(), "1 run(s) resume at the next start") {
		t.Errorf("serve did not keep the drained run:\n%s", s.output())
	}
	checkDrainLog(t, s.output(), runID)
	if err := leaseFree(t, dir, runID); err != nil {
		t.Fatalf("lease after drain: %v", err)
	}
	v, _ := statusOf(t, bin, dir, runID)
	if v.Status != "running" {
		t.Fatalf("status after drain = %s", v.Status)
	}
	// The lease is free: resume takes the run over at once and finishes it.
	cmd := exec.Command(bin, "--repo", dir, "resume", runID)
	done := make(chan struct{})
	var rout []byte
	var rerr error
	go func() { rout, rerr = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("resume after drain did not finish")
	}
	if rerr != nil {
		t.Fatalf("resume after drain: %v\n%s", rerr, rout)
	}
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "completed" {
		t.Fatalf("status after resume = %s\n%s", v.Status, rout)
	}
}

func TestStatusFromSecondProcessDuringRun(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-second"
	dir, p := startDemoRun(t, bin, runID, "20ms")
	// Wait until the run holds the store (its socket answers), so that our
	// status calls do not take the store first.
	if info := waitSocket(t, dir, p.done); info.Kind != "run" || info.PID != p.cmd.Process.Pid {
		t.Fatalf("ping = %+v, want the run process", info)
	}
	seen := 0
	for {
		select {
		case <-p.done:
		default:
			cmd := exec.Command(bin, "--repo", dir, "status", runID, "--json")
			out, err := cmd.CombinedOutput()
			if err != nil {
				select {
				case <-p.done: // the run ended between our check and the call
				default:
					t.Fatalf("status during the run: %v\n%s", err, out)
				}
			} else if strings.Contains(string(out), `"status": "running"`) {
				seen++
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		break
	}
	out, code := p.wait()
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if seen == 0 {
		t.Fatal("no status call saw the run running")
	}
	t.Logf("%d status calls answered while the run held the store", seen)
}

func TestServeQueueAndCancel(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	s := startServe(t, bin, dir)
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	const a, b = "r-20260101-queuea", "r-20260101-queueb"
	for _, id := range []string{a, b} {
		if out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", goal, "--script", script,
			"--run-id", id, "--auto-approve", "--pace", "200ms"); code != 0 {
			t.Fatalf("submit %s: exit %d\n%s", id, code, out)
		}
	}
	// One worker: b waits in the queue while a runs.
	if v, _ := statusOf(t, bin, dir, b); v.Status != host.StatusQueued {
		t.Fatalf("status of the second run = %q, want queued", v.Status)
	}
	out, code := gafferCmd(t, bin, "--repo", dir, "cancel", b)
	if code != 0 || !strings.Contains(out, "removed from the queue") {
		t.Fatalf("cancel queued: exit %d\n%s", code, out)
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "status", b); code != ExitPrecondition {
		t.Fatalf("status of a run cancelled in the queue: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, a, "running", s)
	out, code = gafferCmd(t, bin, "--repo", dir, "cancel", a)
	if code != 0 || !strings.Contains(out, a) {
		t.Fatalf("cancel running: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, a, "cancelled", s)
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, s.output())
	}
	if strings.Contains(s.output(), "resume at the next start") && !strings.Contains(s.output(), "0 run(s) resume") {
		t.Errorf("a cancelled run was kept for the next start:\n%s", s.output())
	}
}

// A run killed under `gaffer run` is not serve's: serve leaves it alone
// until `gaffer resume` hands it over through the socket.
func TestServeResumesARunOnRequest(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const runID = "r-20260101-resume"
	dir, p := startDemoRun(t, bin, runID, "40ms")
	cl := socket.NewClient(filepath.Join(dir, ".git", "gaffer"))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rs, err := cl.Status(t.Context(), host.RunRequest{RunID: runID})
		if ps := rs.Snapshot.State.Progress.Phases; err == nil && len(ps) > 0 && ps[0].Status == state.PhaseCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not finish its first phase")
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait()

	s := startServe(t, bin, dir)
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "running" {
		t.Fatalf("status = %s, want running (not serve's to resume)", v.Status)
	}
	out, code := gafferCmd(t, bin, "--repo", dir, "resume", runID)
	if code != 0 || !strings.Contains(out, "queued to resume") {
		t.Fatalf("resume through serve: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, runID, "completed", s)
	out, code = gafferCmd(t, bin, "--repo", dir, "resume", runID)
	if code != ExitPrecondition {
		t.Fatalf("resume of a finished run through serve: exit %d\n%s", code, out)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, s.output())
	}
}

// checkDrainLog checks serve's JSON log of a drain: the run is logged as
// drained at its checkpoint, and the cut-off node is not a failure.
func checkDrainLog(t *testing.T, log, runID string) {
	t.Helper()
	drained := false
	for _, line := range strings.Split(log, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["run"] != runID {
			continue
		}
		msg, _ := rec["msg"].(string)
		if msg == "run drained at checkpoint" {
			seq, ok := rec["seq"].(float64)
			drained = ok && seq > 0 && rec["level"] == "INFO"
		}
		if rec["level"] == "ERROR" || strings.Contains(line, "status=<nil>") || rec["status"] == "<nil>" ||
			strings.Contains(msg, "failed") {
			t.Errorf("drain logged as a failure: %s", line)
		}
	}
	if !drained {
		t.Errorf("no info line \"run drained at checkpoint\" with run %s and seq:\n%s", runID, log)
	}
}

// statusIfAny is statusOf for a run that may not have its first checkpoint
// yet: a status that says there is no such run (exit 8) gives false.
func statusIfAny(t *testing.T, bin, dir, runID string) (runview.Run, bool) {
	t.Helper()
	cmd := exec.Command(bin, "--repo", dir, "status", runID, "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == ExitPrecondition &&
		(strings.Contains(stderr.String(), "no run "+runID) || strings.Contains(stderr.String(), "no runs in this repository")) {
		return runview.Run{}, false
	}
	if err != nil {
		t.Fatalf("status %s: %v\n%s%s", runID, err, out, stderr.String())
	}
	var v runview.Run
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("status %s: %v\n%s", runID, err, out)
	}
	return v, true
}
