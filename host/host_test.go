package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// blockingSetup's runs wait for release as they begin: the moment
// between Start taking a run and its first checkpoint.
type blockingSetup struct {
	hosttest.Setup
	started, release chan struct{}
}

func (b blockingSetup) Prepare(ctx context.Context, repo *workspace.Repo, spec host.RunSpec) (host.Prepared, error) {
	p, err := b.Setup.Prepare(ctx, repo, spec)
	return blockingRun{p, b}, err
}

type blockingRun struct {
	host.Prepared
	b blockingSetup
}

func (r blockingRun) Begin(ctx context.Context, repo *workspace.Repo) (state.ExecutionState, []string, error) {
	close(r.b.started)
	<-r.b.release
	return r.Prepared.Begin(ctx, repo)
}

// A run Start has taken but not checkpointed yet is told as starting, not
// as a run that does not exist (a second terminal's status right after
// `gaffer run`).
func TestStatusOfARunStartingIsStarting(t *testing.T) {
	f := hosttest.New(t)
	b := blockingSetup{started: make(chan struct{}), release: make(chan struct{})}
	h, err := f.NewHost(host.Config{Setup: b})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	done := make(chan error, 1)
	go func() {
		_, err := h.Start(context.Background(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script})
		done <- err
	}()
	<-b.started
	rs, err := h.Status(t.Context(), host.RunRequest{RunID: "r-1"})
	if err != nil || !rs.Pending || rs.Status != host.StatusStarting || rs.Snapshot.RunID != "r-1" {
		t.Fatalf("Status while starting = %+v, %v; want r-1 pending, starting", rs, err)
	}
	close(b.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rs, err := h.Status(t.Context(), host.RunRequest{RunID: "r-1"}); err != nil || rs.Pending || rs.Status != "awaiting_approval" {
		t.Fatalf("Status after the start = %q pending=%v, %v", rs.Status, rs.Pending, err)
	}
	if _, err := h.Status(t.Context(), host.RunRequest{RunID: "r-2"}); host.CodeOf(err) != host.Refused {
		t.Fatalf("Status of a run nobody starts: %v, want refused", err)
	}
}

// A process killed after a worktree run's last checkpoint, before it
// removed the run's work tree, leaves the tree: the next process to open
// the store removes it, keeping the branch.
func TestOpenRemovesTheWorkTreeOfAnEndedRun(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	out, err := h.Start(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script, AutoApprove: true})
	if err != nil || out.Kind != host.Completed {
		t.Fatalf("Start = %+v, %v", out, err)
	}
	h.Close()
	dir := filepath.Join(host.WorkTreesDir(f.Store), "r-1")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the finished run's work tree is still there: %v", err)
	}
	// The tree as a kill before endWorkTree leaves it.
	if out, err := exec.Command("git", "-C", f.Repo, "worktree", "add", dir, host.ForkBranchPrefix+"r-1").CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	f.Open(t, host.Config{})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Open left the ended run's work tree: %v", err)
	}
	if out, err := exec.Command("git", "-C", f.Repo, "rev-parse", "--verify", host.ForkBranchPrefix+"r-1").CombinedOutput(); err != nil {
		t.Fatalf("the run's branch is gone: %v\n%s", err, out)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		code host.Code
		ok   bool
	}{
		{fmt.Errorf("x: %w", state.ErrInvalidConfig), host.Invalid, true},
		{&state.PlanError{File: "p", Problems: []state.Problem{{Msg: "m"}}}, host.Invalid, true},
		{fmt.Errorf("resume: %w", &checkpoint.LeaseHeldError{RunID: "r"}), host.Held, true},
		{fmt.Errorf("open: %w", workspace.ErrNotRepo), host.Refused, true},
		{fmt.Errorf("developer: %w", agent.ErrMissingKey), host.Refused, true},
		{fmt.Errorf("run r: %w", &checkpoint.CorruptError{RunID: "r", What: "checkpoint", Err: errors.New("bad")}), host.Refused, true},
		{checkpoint.ErrForeignStore, host.Refused, true},
		{errors.New("boom"), "", false},
		{nil, "", false},
	} {
		if code, ok := host.Classify(c.err); code != c.code || ok != c.ok {
			t.Errorf("Classify(%v) = %q, %v; want %q, %v", c.err, code, ok, c.code, c.ok)
		}
	}
	// An *Error's own code is CodeOf's: Classify reads only the cause.
	if code := host.CodeOf(fmt.Errorf("x: %w", workspace.ErrNotRepo)); code != host.Failure {
		t.Errorf("CodeOf(ErrNotRepo) = %q, want Failure: the socket sends codes as they are", code)
	}
}
