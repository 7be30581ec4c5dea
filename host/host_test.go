package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

const testPlan = `# Plan: greet

### Task 1: Write hello
- type: impl
- depends on: none
- files: hello.txt

Write hello.txt.

### Task 2: Write bye
- type: impl
- depends on: 1
- files: bye.txt

Write bye.txt.
`

const testScript = `developer:
  - phase: 1
    summary: wrote hello.txt
    actions:
      - write:
          path: hello.txt
          content: "hello\n"
  - phase: 2
    summary: wrote bye.txt
    actions:
      - write:
          path: bye.txt
          content: "bye\n"
`

// testSetup makes runs from a plan file and drives them with the script
// driver: the program around a host, as small as it gets.
type testSetup struct{}

func (testSetup) NewRun(_ context.Context, _ *workspace.Repo, spec RunSpec) (state.ExecutionState, []string, error) {
	md, err := os.ReadFile(spec.PlanFile)
	if err != nil {
		return state.ExecutionState{}, nil, errorf(Usage, "plan: %w", err)
	}
	s, err := state.NewRun(state.RunInfo{ID: spec.RunID, Goal: "greet", CreatedAt: time.Now()},
		state.RunConfig{ScriptPath: spec.Script, PlanPath: spec.PlanFile, SkipTDDCheck: true, AutoApprove: spec.AutoApprove})
	if err != nil {
		return s, nil, err
	}
	s.Plan.Markdown = string(md)
	return s, nil, nil
}

func (testSetup) Drivers(env DriverEnv) nodes.DriverFactory {
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		sc, err := script.Load(cfg.ScriptPath)
		if err != nil {
			return nil, err
		}
		switch role {
		case agent.RoleEvaluator, agent.RoleSummarizer, agent.RoleDoctor, agent.RoleReplanner:
			if !sc.Has(role) {
				return nil, nil
			}
		}
		return script.NewDriver(sc, script.Options{Groups: env.Groups}), nil
	}
}

func (testSetup) CheckKeys(state.RunConfig) error { return nil }

// fixture is a repository with one commit, and the plan and script of a
// two-phase run beside it.
type fixture struct {
	repo, store, plan, script string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{repo: filepath.Join(base, "repo"), store: filepath.Join(base, "store"),
		plan: filepath.Join(base, "plan.md"), script: filepath.Join(base, "script.yaml")}
	repo, err := workspace.Init(f.repo, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.repo, "README"), []byte("greetings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit(t.Context(), "start", nil, workspace.CommitOptions{
		Author: workspace.Signature{Name: "test", Email: "test@gaffer.invalid"}}); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{f.plan: testPlan, f.script: testScript} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) open(t *testing.T) *Host {
	t.Helper()
	h, err := f.newHost(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// newHost opens f's repository and store (a Badger directory) and the
// host of cfg on them, with testSetup unless cfg names a Setup.
func (f fixture) newHost(cfg Config) (*Host, error) {
	repo, err := workspace.Open(f.repo)
	if err != nil {
		return nil, err
	}
	store, err := badger.Open(f.store, badger.Options{SyncWrites: true})
	if err != nil {
		return nil, err
	}
	cfg.Dir = f.store
	if cfg.Setup == nil {
		cfg.Setup = testSetup{}
	}
	return New(cfg, repo, store, store.Close)
}

// services runs test with the fixture's Host as the Service, and again
// with a Client reaching that Host through its control socket: one set of
// assertions for both.
func services(t *testing.T, test func(t *testing.T, f fixture, svc Service)) {
	t.Run("local", func(t *testing.T) {
		f := newFixture(t)
		test(t, f, f.open(t))
	})
	t.Run("socket", func(t *testing.T) {
		f := newFixture(t)
		h := f.open(t)
		if _, _, err := h.Listen(t.Context(), "test", h); err != nil {
			t.Fatal(err)
		}
		test(t, f, NewClient(f.store))
	})
}

func TestEachOperationLocallyAndThroughTheSocket(t *testing.T) {
	services(t, func(t *testing.T, f fixture, svc Service) {
		ctx := t.Context()
		// Before any run: the newest run of any kind is none, told as such.
		for name, op := range map[string]func() error{
			"Status": func() error { _, err := svc.Status(ctx, RunRequest{}); return err },
			"Resume": func() error { _, err := svc.Resume(ctx, RunRequest{}); return err },
			"Answer": func() error { _, err := svc.Answer(ctx, AnswerRequest{Verdict: Approve}); return err },
		} {
			if err := op(); CodeOf(err) != Refused || err.Error() != "no runs in this repository (the store at "+f.store+" has none)" {
				t.Errorf("%s in a store without runs: %v (%s)", name, err, CodeOf(err))
			}
		}
		// Start: nobody to ask, so the run parks at its plan's approval.
		out, err := svc.Start(ctx, RunSpec{RunID: "r-1", PlanFile: f.plan, Script: f.script})
		if err != nil || out.Kind != Parked || out.RunID != "r-1" {
			t.Fatalf("Start = %+v, %v; want r-1 parked", out, err)
		}
		rs, err := svc.Status(ctx, RunRequest{})
		if err != nil || rs.Snapshot.RunID != "r-1" || rs.Status != "awaiting_approval" || rs.Stopped {
			t.Fatalf("Status = %s %q stopped=%v, %v; want r-1 awaiting_approval", rs.Snapshot.RunID, rs.Status, rs.Stopped, err)
		}
		if got := len(rs.Snapshot.State.Plan.Phases); got != 2 {
			t.Fatalf("Status carries %d phases, want the plan's 2", got)
		}
		// Answer: approved, the run goes on to its end here.
		out, err = svc.Answer(ctx, AnswerRequest{RunID: "r-1", Verdict: Approve})
		if err != nil || out.Kind != Completed {
			t.Fatalf("Answer = %+v, %v; want completed", out, err)
		}
		// The run worked on its own branch, in its own work tree, which is
		// gone; the user's checkout has none of its files.
		for _, name := range []string{"hello.txt", "bye.txt"} {
			if out, err := exec.Command("git", "-C", f.repo, "cat-file", "-e", "gaffer/r-1:"+name).CombinedOutput(); err != nil {
				t.Errorf("the run's %s on branch gaffer/r-1: %v %s", name, err, out)
			}
			if _, err := os.Stat(filepath.Join(f.repo, name)); err == nil {
				t.Errorf("the run's %s is in the user's checkout", name)
			}
		}
		if _, err := os.Stat(filepath.Join(WorkTreesDir(f.store), "r-1")); !os.IsNotExist(err) {
			t.Errorf("the finished run's work tree is still there: %v", err)
		}
		hist, err := svc.History(ctx, RunRequest{RunID: "r-1"})
		if err != nil || len(hist) < 4 {
			t.Fatalf("History = %d checkpoints, %v", len(hist), err)
		}
		if hist[0].Seq <= hist[len(hist)-1].Seq || hist[0].Status != "completed" {
			t.Fatalf("History is not newest first ending completed: %+v", hist[0])
		}
		var waiting uint64
		for _, c := range hist {
			if c.Interrupt == nodes.NodeApproval {
				waiting = c.Seq
			}
		}
		if waiting == 0 {
			t.Fatal("History has no checkpoint waiting for approval")
		}
		if _, err := svc.Fork(ctx, ForkRequest{RunID: "r-1", Seq: 999}); CodeOf(err) != Refused || !strings.Contains(err.Error(), "run r-1 has no checkpoint 999") {
			t.Fatalf("Fork of a checkpoint the run does not have: %v (%s)", err, CodeOf(err))
		}
		// Resume of a finished run is refused with the fix.
		if _, err := svc.Resume(ctx, RunRequest{RunID: "r-1"}); CodeOf(err) != Refused || !strings.Contains(err.Error(), "already finished") {
			t.Fatalf("Resume of a finished run: %v (%s), want refused", err, CodeOf(err))
		}
		// Fork the checkpoint that waited for approval: a new run on its
		// own branch, which asks for approval again.
		fk, err := svc.Fork(ctx, ForkRequest{RunID: "r-1", Seq: waiting})
		if err != nil || fk.RunID == "" || fk.Branch != ForkBranchPrefix+fk.RunID || fk.From != "r-1" {
			t.Fatalf("Fork = %+v, %v", fk, err)
		}
		out, err = svc.Resume(ctx, RunRequest{RunID: fk.RunID})
		if err != nil || out.Kind != Parked {
			t.Fatalf("Resume of the fork = %+v, %v; want parked for approval", out, err)
		}
		list, err := svc.List(ctx, ListRequest{})
		if err != nil || len(list) != 2 {
			t.Fatalf("List = %d runs, %v; want 2", len(list), err)
		}
		// Cancel ends the fork for good.
		out, err = svc.Cancel(ctx, RunRequest{RunID: fk.RunID})
		if err != nil || out.Kind != Cancelled || out.RunID != fk.RunID {
			t.Fatalf("Cancel = %+v, %v", out, err)
		}
		if rs, err := svc.Status(ctx, RunRequest{RunID: fk.RunID}); err != nil || rs.Status != "cancelled" {
			t.Fatalf("Status of the cancelled fork = %q, %v", rs.Status, err)
		}
		// State is the latest checkpoint as it is; the newest run's without
		// a run id.
		snap, err := svc.State(ctx, RunRequest{})
		if err != nil || snap.RunID != fk.RunID || snap.State.Status != state.RunCancelled || len(snap.State.Plan.Phases) != 2 {
			t.Fatalf("State = %s %s, %v; want the cancelled fork with its plan", snap.RunID, snap.State.Status, err)
		}
		// Delete takes the fork out of the store; its branch stays.
		if err := svc.Delete(ctx, RunRequest{RunID: fk.RunID}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := svc.State(ctx, RunRequest{RunID: fk.RunID}); CodeOf(err) != Refused || err.Error() != "no run "+fk.RunID+" in "+f.store {
			t.Fatalf("State of the deleted fork: %v (%s)", err, CodeOf(err))
		}
		if list, err := svc.List(ctx, ListRequest{}); err != nil || len(list) != 1 || list[0].RunID != "r-1" {
			t.Fatalf("List after the delete = %d runs, %v; want r-1", len(list), err)
		}
		if err := svc.Delete(ctx, RunRequest{RunID: "../r-1"}); CodeOf(err) != Usage {
			t.Fatalf("Delete of a path: %v (%s), want usage", err, CodeOf(err))
		}
		// Refusals keep their code and their one line across the socket.
		_, err = svc.Status(ctx, RunRequest{RunID: "r-none"})
		if CodeOf(err) != Refused || err.Error() != "no run r-none in "+f.store {
			t.Fatalf("Status of an unknown run: %v (%s)", err, CodeOf(err))
		}
		if _, err := svc.Submit(ctx, RunSpec{PlanFile: f.plan}); CodeOf(err) != Refused || !strings.Contains(err.Error(), "start one with: gaffer serve") {
			t.Fatalf("Submit to a host that is not serve: %v (%s)", err, CodeOf(err))
		}
		if _, err := svc.Answer(ctx, AnswerRequest{RunID: "r-1"}); CodeOf(err) != Usage {
			t.Fatalf("Answer without a verdict: %v (%s), want usage", err, CodeOf(err))
		}
	})
}

// The socket a command offers while it holds the store (Holder) reads
// runs and cancels them, and refuses to start, resume or fork one: those
// wait until the command ends.
func TestHolderRefusesToDriveForOthers(t *testing.T) {
	f := newFixture(t)
	h := f.open(t)
	if out, err := h.Start(t.Context(), RunSpec{RunID: "r-1", PlanFile: f.plan, Script: f.script}); err != nil || out.Kind != Parked {
		t.Fatalf("Start = %+v, %v", out, err)
	}
	if _, _, err := h.Listen(t.Context(), "run", h.Holder()); err != nil {
		t.Fatal(err)
	}
	cl := NewClient(f.store)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"start":  func() error { _, err := cl.Start(ctx, RunSpec{RunID: "r-2", PlanFile: f.plan}); return err },
		"resume": func() error { _, err := cl.Resume(ctx, RunRequest{RunID: "r-1"}); return err },
		"fork":   func() error { _, err := cl.Fork(ctx, ForkRequest{RunID: "r-1", Seq: 1}); return err },
		"submit": func() error { _, err := cl.Submit(ctx, RunSpec{RunID: "r-2", PlanFile: f.plan}); return err },
		"answer": func() error { _, err := cl.Answer(ctx, AnswerRequest{RunID: "r-1", Verdict: Approve}); return err },
	} {
		if err := call(); CodeOf(err) != Held || !strings.Contains(err.Error(), "`gaffer run`, which holds the store") {
			t.Errorf("%s through a holder: %v (%s), want held by `gaffer run`", name, err, CodeOf(err))
		}
	}
	if rs, err := cl.Status(ctx, RunRequest{RunID: "r-1"}); err != nil || rs.Status != "awaiting_approval" {
		t.Fatalf("Status through a holder = %q, %v", rs.Status, err)
	}
	out, err := cl.Cancel(ctx, RunRequest{RunID: "r-1"})
	if err != nil || out.Kind != Cancelled {
		t.Fatalf("Cancel through a holder = %+v, %v", out, err)
	}
}

// A question left without an answer (ErrNotAnswered) parks the run; an
// answer from another process, through the socket, ends the question and
// the run goes on in the host that asked.
type askingFront struct {
	Quiet
	asked chan struct{}
}

func (askingFront) Asks() bool { return true }

func (f askingFront) Ask(ctx context.Context, _ nodes.ApprovalRequest, _ state.ExecutionState, remote <-chan nodes.Answer) (nodes.Answer, error) {
	close(f.asked)
	select {
	case a := <-remote:
		return a, nil
	case <-ctx.Done():
		return nodes.Answer{}, ErrNotAnswered
	}
}

func TestAnswerFromAnotherProcessReachesTheQuestion(t *testing.T) {
	f := newFixture(t)
	front := askingFront{asked: make(chan struct{})}
	h, err := f.newHost(Config{Front: front})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, _, err := h.Listen(t.Context(), "run", h.Holder()); err != nil {
		t.Fatal(err)
	}
	done := make(chan Outcome, 1)
	go func() {
		out, err := h.Start(context.Background(), RunSpec{RunID: "r-1", PlanFile: f.plan, Script: f.script})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-front.asked
	if err := NewClient(f.store).Delete(t.Context(), RunRequest{RunID: "r-1"}); CodeOf(err) != Held || !strings.Contains(err.Error(), "is driving it") {
		t.Fatalf("Delete of the run the holder drives: %v (%s), want held", err, CodeOf(err))
	}
	out, err := NewClient(f.store).Answer(t.Context(), AnswerRequest{Verdict: Approve})
	if err != nil || out.Kind != HandedOn || !strings.Contains(out.Message, "Run r-1 approved; gaffer run") {
		t.Fatalf("Answer through the socket = %+v, %v", out, err)
	}
	if got := <-done; got.Kind != Completed {
		t.Fatalf("the run that asked = %+v, want completed", got)
	}
}

func TestNoServerIsNoServer(t *testing.T) {
	_, err := NewClient(filepath.Join(t.TempDir(), "store")).List(t.Context(), ListRequest{})
	if err == nil || CodeOf(err) != Failure {
		t.Fatalf("List without a server: %v", err)
	}
	var he *Error
	if errors.As(err, &he) {
		t.Fatalf("no server is not a refusal: %v", err)
	}
}

// blockingSetup's NewRun waits for release: the moment between Start
// taking a run and its first checkpoint.
type blockingSetup struct {
	testSetup
	started, release chan struct{}
}

func (b blockingSetup) NewRun(ctx context.Context, repo *workspace.Repo, spec RunSpec) (state.ExecutionState, []string, error) {
	close(b.started)
	<-b.release
	return b.testSetup.NewRun(ctx, repo, spec)
}

// A run Start has taken but not checkpointed yet is told as starting, not
// as a run that does not exist (a second terminal's status right after
// `gaffer run`).
func TestStatusOfARunStartingIsStarting(t *testing.T) {
	f := newFixture(t)
	b := blockingSetup{started: make(chan struct{}), release: make(chan struct{})}
	h, err := f.newHost(Config{Setup: b})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	done := make(chan error, 1)
	go func() {
		_, err := h.Start(context.Background(), RunSpec{RunID: "r-1", PlanFile: f.plan, Script: f.script})
		done <- err
	}()
	<-b.started
	rs, err := h.Status(t.Context(), RunRequest{RunID: "r-1"})
	if err != nil || !rs.Pending || rs.Status != StatusStarting || rs.Snapshot.RunID != "r-1" {
		t.Fatalf("Status while starting = %+v, %v; want r-1 pending, starting", rs, err)
	}
	close(b.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rs, err := h.Status(t.Context(), RunRequest{RunID: "r-1"}); err != nil || rs.Pending || rs.Status != "awaiting_approval" {
		t.Fatalf("Status after the start = %q pending=%v, %v", rs.Status, rs.Pending, err)
	}
	if _, err := h.Status(t.Context(), RunRequest{RunID: "r-2"}); CodeOf(err) != Refused {
		t.Fatalf("Status of a run nobody starts: %v, want refused", err)
	}
}

// A process killed after a worktree run's last checkpoint, before it
// removed the run's work tree, leaves the tree: the next process to open
// the store removes it, keeping the branch.
func TestOpenRemovesTheWorkTreeOfAnEndedRun(t *testing.T) {
	f := newFixture(t)
	h := f.open(t)
	out, err := h.Start(t.Context(), RunSpec{RunID: "r-1", PlanFile: f.plan, Script: f.script, AutoApprove: true})
	if err != nil || out.Kind != Completed {
		t.Fatalf("Start = %+v, %v", out, err)
	}
	h.Close()
	dir := filepath.Join(WorkTreesDir(f.store), "r-1")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the finished run's work tree is still there: %v", err)
	}
	// The tree as a kill before endWorkTree leaves it.
	if out, err := exec.Command("git", "-C", f.repo, "worktree", "add", dir, ForkBranchPrefix+"r-1").CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	f.open(t)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Open left the ended run's work tree: %v", err)
	}
	if out, err := exec.Command("git", "-C", f.repo, "rev-parse", "--verify", ForkBranchPrefix+"r-1").CombinedOutput(); err != nil {
		t.Fatalf("the run's branch is gone: %v\n%s", err, out)
	}
}

// closingService's Status waits until its call is cut off.
type closingService struct {
	Service
	called chan struct{}
}

func (s closingService) Status(ctx context.Context, _ RunRequest) (RunStatus, error) {
	close(s.called)
	<-ctx.Done()
	return RunStatus{}, ctx.Err()
}

// A holder that closes during a call tells the caller it is gone
// (ErrUnreachable: a reader opens the store itself), not the cut's
// "context canceled".
func TestCallCutOffByTheHolderClosingIsUnreachable(t *testing.T) {
	f := newFixture(t)
	h := f.open(t)
	svc := closingService{called: make(chan struct{})}
	stop, _, err := h.Listen(t.Context(), "test", svc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := NewClient(f.store).Status(t.Context(), RunRequest{RunID: "r-1"})
		done <- err
	}()
	<-svc.called
	stop()
	err = <-done
	if !errors.Is(err, ErrUnreachable) || CodeOf(err) != Failure {
		t.Fatalf("Status cut off by the holder's close: %v (%s), want ErrUnreachable", err, CodeOf(err))
	}
}
