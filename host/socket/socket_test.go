package socket

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// services runs test with the fixture's Host as the Service, and again
// with a Client reaching that Host through its control socket: one set of
// assertions for both.
func services(t *testing.T, test func(t *testing.T, f hosttest.Fixture, svc host.Service)) {
	t.Run("local", func(t *testing.T) {
		f := hosttest.New(t)
		test(t, f, f.Open(t, host.Config{}))
	})
	t.Run("socket", func(t *testing.T) {
		f := hosttest.New(t)
		h := f.Open(t, host.Config{})
		if _, _, err := Listen(t.Context(), h, h, control.Info{Kind: "test"}); err != nil {
			t.Fatal(err)
		}
		test(t, f, NewClient(f.Store))
	})
}

func TestEachOperationLocallyAndThroughTheSocket(t *testing.T) {
	services(t, func(t *testing.T, f hosttest.Fixture, svc host.Service) {
		ctx := t.Context()
		// Before any run: the newest run of any kind is none, told as such.
		for name, op := range map[string]func() error{
			"Status": func() error { _, err := svc.Status(ctx, host.RunRequest{}); return err },
			"Resume": func() error { _, err := svc.Resume(ctx, host.RunRequest{}); return err },
			"Answer": func() error { _, err := svc.Answer(ctx, host.AnswerRequest{Verdict: host.Approve}); return err },
		} {
			if err := op(); host.CodeOf(err) != host.Refused || err.Error() != "no runs in this repository (the store at "+f.Store+" has none)" {
				t.Errorf("%s in a store without runs: %v (%s)", name, err, host.CodeOf(err))
			}
		}
		// Start: nobody to ask, so the run parks at its plan's approval.
		out, err := svc.Start(ctx, host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script})
		if err != nil || out.Kind != host.Parked || out.RunID != "r-1" {
			t.Fatalf("Start = %+v, %v; want r-1 parked", out, err)
		}
		rs, err := svc.Status(ctx, host.RunRequest{})
		if err != nil || rs.Snapshot.RunID != "r-1" || rs.Status != "awaiting_approval" || rs.Stopped {
			t.Fatalf("Status = %s %q stopped=%v, %v; want r-1 awaiting_approval", rs.Snapshot.RunID, rs.Status, rs.Stopped, err)
		}
		if got := len(rs.Snapshot.State.Plan.Phases); got != 2 {
			t.Fatalf("Status carries %d phases, want the plan's 2", got)
		}
		// Answer: approved, the run goes on to its end here.
		out, err = svc.Answer(ctx, host.AnswerRequest{RunID: "r-1", Verdict: host.Approve})
		if err != nil || out.Kind != host.Completed {
			t.Fatalf("Answer = %+v, %v; want completed", out, err)
		}
		// The run worked on its own branch, in its own work tree, which is
		// gone; the user's checkout has none of its files.
		for _, name := range []string{"hello.txt", "bye.txt"} {
			if out, err := exec.Command("git", "-C", f.Repo, "cat-file", "-e", "gaffer/r-1:"+name).CombinedOutput(); err != nil {
				t.Errorf("the run's %s on branch gaffer/r-1: %v %s", name, err, out)
			}
			if _, err := os.Stat(filepath.Join(f.Repo, name)); err == nil {
				t.Errorf("the run's %s is in the user's checkout", name)
			}
		}
		if _, err := os.Stat(filepath.Join(host.WorkTreesDir(f.Store), "r-1")); !os.IsNotExist(err) {
			t.Errorf("the finished run's work tree is still there: %v", err)
		}
		hist, err := svc.History(ctx, host.RunRequest{RunID: "r-1"})
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
		if _, err := svc.Fork(ctx, host.ForkRequest{RunID: "r-1", Seq: 999}); host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "run r-1 has no checkpoint 999") {
			t.Fatalf("Fork of a checkpoint the run does not have: %v (%s)", err, host.CodeOf(err))
		}
		// Resume of a finished run is refused with the fix.
		if _, err := svc.Resume(ctx, host.RunRequest{RunID: "r-1"}); host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "already finished") {
			t.Fatalf("Resume of a finished run: %v (%s), want refused", err, host.CodeOf(err))
		}
		// Fork the checkpoint that waited for approval: a new run on its
		// own branch, which asks for approval again.
		fk, err := svc.Fork(ctx, host.ForkRequest{RunID: "r-1", Seq: waiting})
		if err != nil || fk.RunID == "" || fk.Branch != host.ForkBranchPrefix+fk.RunID || fk.From != "r-1" {
			t.Fatalf("Fork = %+v, %v", fk, err)
		}
		out, err = svc.Resume(ctx, host.RunRequest{RunID: fk.RunID})
		if err != nil || out.Kind != host.Parked {
			t.Fatalf("Resume of the fork = %+v, %v; want parked for approval", out, err)
		}
		list, err := svc.List(ctx, host.ListRequest{})
		if err != nil || len(list) != 2 {
			t.Fatalf("List = %d runs, %v; want 2", len(list), err)
		}
		// Cancel ends the fork for good.
		out, err = svc.Cancel(ctx, host.RunRequest{RunID: fk.RunID})
		if err != nil || out.Kind != host.Cancelled || out.RunID != fk.RunID {
			t.Fatalf("Cancel = %+v, %v", out, err)
		}
		if rs, err := svc.Status(ctx, host.RunRequest{RunID: fk.RunID}); err != nil || rs.Status != "cancelled" {
			t.Fatalf("Status of the cancelled fork = %q, %v", rs.Status, err)
		}
		// State is the latest checkpoint as it is; the newest run's without
		// a run id.
		snap, err := svc.State(ctx, host.RunRequest{})
		if err != nil || snap.RunID != fk.RunID || snap.State.Status != state.RunCancelled || len(snap.State.Plan.Phases) != 2 {
			t.Fatalf("State = %s %s, %v; want the cancelled fork with its plan", snap.RunID, snap.State.Status, err)
		}
		// Delete takes the fork out of the store; its branch stays.
		if err := svc.Delete(ctx, host.RunRequest{RunID: fk.RunID}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := svc.State(ctx, host.RunRequest{RunID: fk.RunID}); host.CodeOf(err) != host.Refused || err.Error() != "no run "+fk.RunID+" in "+f.Store {
			t.Fatalf("State of the deleted fork: %v (%s)", err, host.CodeOf(err))
		}
		if list, err := svc.List(ctx, host.ListRequest{}); err != nil || len(list) != 1 || list[0].RunID != "r-1" {
			t.Fatalf("List after the delete = %d runs, %v; want r-1", len(list), err)
		}
		if err := svc.Delete(ctx, host.RunRequest{RunID: "../r-1"}); host.CodeOf(err) != host.Usage {
			t.Fatalf("Delete of a path: %v (%s), want usage", err, host.CodeOf(err))
		}
		// Refusals keep their code and their one line across the socket.
		_, err = svc.Status(ctx, host.RunRequest{RunID: "r-none"})
		if host.CodeOf(err) != host.Refused || err.Error() != "no run r-none in "+f.Store {
			t.Fatalf("Status of an unknown run: %v (%s)", err, host.CodeOf(err))
		}
		if _, err := svc.Submit(ctx, host.RunSpec{PlanFile: f.Plan}); host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "start one with: gaffer serve") {
			t.Fatalf("Submit to a host that is not serve: %v (%s)", err, host.CodeOf(err))
		}
		if _, err := svc.Answer(ctx, host.AnswerRequest{RunID: "r-1"}); host.CodeOf(err) != host.Usage {
			t.Fatalf("Answer without a verdict: %v (%s), want usage", err, host.CodeOf(err))
		}
	})
}

// The socket a command offers while it holds the store (Holder) reads
// runs and cancels them, and refuses to start, resume or fork one: those
// wait until the command ends.
func TestHolderRefusesToDriveForOthers(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	if out, err := h.Start(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script}); err != nil || out.Kind != host.Parked {
		t.Fatalf("Start = %+v, %v", out, err)
	}
	if _, _, err := Listen(t.Context(), h, h.Holder("run"), control.Info{Kind: "run"}); err != nil {
		t.Fatal(err)
	}
	cl := NewClient(f.Store)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"start":  func() error { _, err := cl.Start(ctx, host.RunSpec{RunID: "r-2", PlanFile: f.Plan}); return err },
		"resume": func() error { _, err := cl.Resume(ctx, host.RunRequest{RunID: "r-1"}); return err },
		"fork":   func() error { _, err := cl.Fork(ctx, host.ForkRequest{RunID: "r-1", Seq: 1}); return err },
		"submit": func() error { _, err := cl.Submit(ctx, host.RunSpec{RunID: "r-2", PlanFile: f.Plan}); return err },
		"answer": func() error {
			_, err := cl.Answer(ctx, host.AnswerRequest{RunID: "r-1", Verdict: host.Approve})
			return err
		},
	} {
		if err := call(); host.CodeOf(err) != host.Held || !strings.Contains(err.Error(), "`gaffer run`, which holds the store") {
			t.Errorf("%s through a holder: %v (%s), want held by `gaffer run`", name, err, host.CodeOf(err))
		}
	}
	if rs, err := cl.Status(ctx, host.RunRequest{RunID: "r-1"}); err != nil || rs.Status != "awaiting_approval" {
		t.Fatalf("Status through a holder = %q, %v", rs.Status, err)
	}
	out, err := cl.Cancel(ctx, host.RunRequest{RunID: "r-1"})
	if err != nil || out.Kind != host.Cancelled {
		t.Fatalf("Cancel through a holder = %+v, %v", out, err)
	}
}

// A question left without an answer (ErrNotAnswered) parks the run; an
// answer from another process, through the socket, ends the question and
// the run goes on in the host that asked.
type askingFront struct {
	host.Quiet
	asked chan struct{}
}

func (askingFront) Asks() bool { return true }

func (f askingFront) Ask(ctx context.Context, _ nodes.ApprovalRequest, _ state.ExecutionState, remote <-chan nodes.Answer) (nodes.Answer, error) {
	close(f.asked)
	select {
	case a := <-remote:
		return a, nil
	case <-ctx.Done():
		return nodes.Answer{}, host.ErrNotAnswered
	}
}

func TestAnswerFromAnotherProcessReachesTheQuestion(t *testing.T) {
	f := hosttest.New(t)
	front := askingFront{asked: make(chan struct{})}
	h, err := f.NewHost(host.Config{Front: front})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, _, err := Listen(t.Context(), h, h.Holder("run"), control.Info{Kind: "run"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan host.Outcome, 1)
	go func() {
		out, err := h.Start(context.Background(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-front.asked
	if err := NewClient(f.Store).Delete(t.Context(), host.RunRequest{RunID: "r-1"}); host.CodeOf(err) != host.Held || !strings.Contains(err.Error(), "is driving it") {
		t.Fatalf("Delete of the run the holder drives: %v (%s), want held", err, host.CodeOf(err))
	}
	out, err := NewClient(f.Store).Answer(t.Context(), host.AnswerRequest{Verdict: host.Approve})
	if err != nil || out.Kind != host.HandedOn || !strings.Contains(out.Message, "Run r-1 approved; gaffer run") {
		t.Fatalf("Answer through the socket = %+v, %v", out, err)
	}
	if got := <-done; got.Kind != host.Completed {
		t.Fatalf("the run that asked = %+v, want completed", got)
	}
}

func TestNoServerIsNoServer(t *testing.T) {
	_, err := NewClient(filepath.Join(t.TempDir(), "store")).List(t.Context(), host.ListRequest{})
	if err == nil || host.CodeOf(err) != host.Failure {
		t.Fatalf("List without a server: %v", err)
	}
	var he *host.Error
	if errors.As(err, &he) {
		t.Fatalf("no server is not a refusal: %v", err)
	}
}

// closingService's Status waits until its call is cut off.
type closingService struct {
	host.Service
	called chan struct{}
}

func (s closingService) Status(ctx context.Context, _ host.RunRequest) (host.RunStatus, error) {
	close(s.called)
	<-ctx.Done()
	return host.RunStatus{}, ctx.Err()
}

// A holder that closes during a call tells the caller it is gone
// (ErrUnreachable: a reader opens the store itself), not the cut's
// "context canceled".
func TestCallCutOffByTheHolderClosingIsUnreachable(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	svc := closingService{called: make(chan struct{})}
	stop, _, err := Listen(t.Context(), h, svc, control.Info{Kind: "test"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := NewClient(f.Store).Status(t.Context(), host.RunRequest{RunID: "r-1"})
		done <- err
	}()
	<-svc.called
	stop()
	err = <-done
	if !errors.Is(err, ErrUnreachable) || host.CodeOf(err) != host.Failure {
		t.Fatalf("Status cut off by the holder's close: %v (%s), want ErrUnreachable", err, host.CodeOf(err))
	}
}
