package nodes

import (
	"context"
	"errors"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// TestCrashAtEveryCheckpoint loses each checkpoint of a run in turn — the
// process "dies" after a node's side effects (a commit, a reset, files
// written) and before its checkpoint — then resumes (answering the
// approval when the run waits for it) until the run ends. Every run must
// end with the tree and commits of the run that never crashed.
func TestCrashAtEveryCheckpoint(t *testing.T) {
	for _, auto := range []bool{true, false} {
		ref := newHarness(t, retryScript)
		drive(t, ref, auto)
		wantTree, wantLog := ref.git("rev-parse", "HEAD^{tree}"), ref.git("log", "--format=%s%n%b")
		puts := ref.store.puts.Load()
		for k := int64(2); k <= puts; k++ { // the first checkpoint is the run's input
			h := newHarness(t, retryScript)
			h.failAt(k)
			drive(t, h, auto)
			if got := h.git("rev-parse", "HEAD^{tree}"); got != wantTree {
				t.Fatalf("auto-approve %v, checkpoint %d lost: tree %s, want %s", auto, k, got, wantTree)
			}
			if got := h.git("log", "--format=%s%n%b"); got != wantLog {
				t.Fatalf("auto-approve %v, checkpoint %d lost: commits\n%s\nwant\n%s", auto, k, got, wantLog)
			}
			if got := h.git("status", "--porcelain", "--untracked-files=all"); got != "?? notes.txt" {
				t.Fatalf("auto-approve %v, checkpoint %d lost: git status\n%s", auto, k, got)
			}
		}
		t.Logf("auto-approve %v: lost each of %d checkpoints in turn", auto, puts-1)
	}
}

// drive runs r-1 to its end through crashes and the approval.
func drive(t *testing.T, h *harness, auto bool) {
	t.Helper()
	ctx := context.Background()
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: auto})
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatal("no end after 10 resumes")
		}
		switch {
		case errors.Is(err, errCrash):
			if snap, serr := h.runner.State(ctx, "r-1"); serr == nil && snap.Interrupt != nil {
				res, err = h.runner.Resume(ctx, "r-1", graph.WithResume(Answer{Approved: true}))
			} else {
				res, err = h.runner.Resume(ctx, "r-1")
			}
			continue
		case err != nil:
			t.Fatalf("run: %v", err)
		case res.Status == graph.Interrupted:
			res, err = h.runner.Resume(ctx, "r-1", graph.WithResume(Answer{Approved: true}))
			continue
		}
		if res.State.Status != state.RunCompleted {
			t.Fatalf("status %v: %q", res.State.Status, res.State.Errors)
		}
		return
	}
}
