package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

// errCancelRequested is the cause of a driven run's context when
// `gaffer cancel` in another terminal asked the holder to cancel it.
var errCancelRequested = errors.New("cancelled from another terminal")

// heldRun is the run a `gaffer run`, `approve` or `resume` process drives
// while it holds the store: the run the control socket's answer and cancel
// reach in it.
type heldRun struct {
	mu     sync.Mutex
	kind   string                  // the holding command: run, approve, resume
	cancel context.CancelCauseFunc // cancels the command's context (set by opened)
	runID  string                  // the run drive is driving; "" before and after
	done   chan struct{}           // closed when that drive has ended
	result error                   // a cancel's outcome, read after done
	// answers is non-nil while the run's terminal prompt waits; a send on
	// it is the answer. waiting is closed when the prompt stops.
	answers chan nodes.Answer
	waiting chan struct{}
}

// holdCommand makes c's context cancellable by the control socket's
// cancel (opened calls it in the process that opened the store).
func (h *opsHooks) holdCommand(c *ucli.Context, kind string) func() {
	ctx, cancel := context.WithCancelCause(c.Context)
	c.Context = ctx
	h.held.mu.Lock()
	h.held.kind, h.held.cancel = kind, cancel
	h.held.mu.Unlock()
	return func() { cancel(nil) }
}

// driving registers runID as the run this process drives, until the
// returned function runs with drive's error: when the run was cancelled
// from another terminal, it writes the cancel checkpoint (as `gaffer
// cancel` does) and returns the cancelled exit error.
func (h *opsHooks) driving(ctx context.Context, e *env, runID string) func(error) error {
	if h == nil || h.shared != nil || h.serving || e.borrowed {
		return func(err error) error { return err }
	}
	done := make(chan struct{})
	h.held.mu.Lock()
	h.held.runID, h.held.done, h.held.result = runID, done, nil
	h.held.mu.Unlock()
	return func(err error) error {
		var result error
		if errors.Is(context.Cause(ctx), errCancelRequested) {
			quiet := *e
			quiet.io.Out = io.Discard
			if cerr := Cancel(context.WithoutCancel(ctx), &quiet, runID); cerr != nil {
				result = cerr
			} else {
				fmt.Fprintf(e.io.Out, "\nRun %s cancelled from another terminal.\n", runID)
				err = exitf(ExitHalted, "run %s was cancelled", runID)
			}
		}
		h.held.mu.Lock()
		h.held.runID, h.held.result = "", result
		h.held.mu.Unlock()
		close(done)
		return err
	}
}

// awaitAnswer tells the control socket that runID's terminal prompt waits
// for an answer: answers delivered on the channel come from approve or
// reject in another terminal. stop ends the wait.
func (h *opsHooks) awaitAnswer(runID string) (answers <-chan nodes.Answer, stop func()) {
	if h == nil || h.shared != nil {
		return nil, func() {}
	}
	ch, waiting := make(chan nodes.Answer), make(chan struct{})
	h.held.mu.Lock()
	if h.held.runID != runID {
		h.held.mu.Unlock()
		return nil, func() {}
	}
	h.held.answers, h.held.waiting = ch, waiting
	h.held.mu.Unlock()
	return ch, func() {
		h.held.mu.Lock()
		if h.held.answers == ch {
			h.held.answers, h.held.waiting = nil, nil
		}
		h.held.mu.Unlock()
		close(waiting)
	}
}

// holderName is "pid P on host H".
func holderName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on host %s", os.Getpid(), host)
}

// heldElsewhere is the refusal for a run this holder cannot act on.
func (h *opsHooks) heldElsewhere(runID, driving, what string) error {
	h.held.mu.Lock()
	kind := h.held.kind
	h.held.mu.Unlock()
	by := fmt.Sprintf("`gaffer %s`, which holds the store", kind)
	if driving != "" {
		by += " to drive run " + driving
	}
	if runID == "" {
		return exitf(ExitLocked, "the store is held by %s (%s); %s when that command ends", holderName(), by, what)
	}
	return exitf(ExitLocked, "run %s is held by %s (%s); %s when that command ends", runID, holderName(), by, what)
}

// handleHeld registers the answer, cancel, resume and submit operations of
// a run, approve or resume process (e is its env).
func (h *opsHooks) handleHeld(mux *control.Mux, e *env) {
	mux.Handle(opAnswer, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a answerArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "answer: %w", err)
		}
		h.held.mu.Lock()
		driving, answers, waiting := h.held.runID, h.held.answers, h.held.waiting
		h.held.mu.Unlock()
		id := a.RunID
		if id == "" {
			id = driving
		}
		if id == "" || id != driving {
			if id != "" {
				if snap, err := e.runner.State(ctx, id); err == nil && runStatus(snap) != state.RunAwaitingApproval {
					return nil, exitf(ExitPrecondition, "run %s is not waiting for approval (it is %s)", id, runStatus(snap))
				} else if err != nil {
					return nil, exitf(ExitPrecondition, "no run %s in %s", id, e.storeDir)
				}
			}
			return nil, h.heldElsewhere(id, driving, "answer it")
		}
		if answers == nil {
			return nil, exitf(ExitPrecondition, "run %s is not waiting for approval (it is running in %s)", id, holderName())
		}
		select {
		case answers <- answerOf(a):
		case <-waiting:
			return nil, exitf(ExitPrecondition, "run %s is not waiting for approval any more (it was answered in its terminal)", id)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return answerResult{RunID: id, Message: fmt.Sprintf("Run %s %s; gaffer %s (pid %d) continues it.",
			id, answerVerb(answerOf(a)), h.kind(), os.Getpid())}, nil
	})
	mux.Handle(opCancel, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a runArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "cancel: %w", err)
		}
		h.held.mu.Lock()
		driving, done, cancel := h.held.runID, h.held.done, h.held.cancel
		h.held.mu.Unlock()
		id := a.RunID
		if id == "" {
			id = driving
		}
		if id != "" && id == driving && cancel != nil {
			cancel(errCancelRequested)
			select {
			case <-done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			h.held.mu.Lock()
			result := h.held.result
			h.held.mu.Unlock()
			if result != nil {
				return nil, result
			}
			return answerResult{RunID: id, Message: fmt.Sprintf("Run %s cancelled.", id)}, nil
		}
		// Another run of the store: nobody drives it, this process writes
		// its cancel checkpoint.
		var out strings.Builder
		be := *e
		be.io.Out, be.io.Err, be.borrowed, be.closers = &out, io.Discard, true, nil
		if err := Cancel(ctx, &be, id); err != nil {
			return nil, err
		}
		return answerResult{RunID: id, Message: strings.TrimSpace(out.String())}, nil
	})
	mux.Handle(opResume, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a runArgs
		_ = json.Unmarshal(args, &a)
		h.held.mu.Lock()
		driving := h.held.runID
		h.held.mu.Unlock()
		if a.RunID != "" && a.RunID == driving {
			return nil, exitf(ExitLocked, "run %s is held by %s: `gaffer %s` is driving it", a.RunID, holderName(), h.kind())
		}
		return nil, h.heldElsewhere(a.RunID, driving, "resume it")
	})
	mux.Handle(opSubmit, func(ctx context.Context, args json.RawMessage) (any, error) {
		var o RunOptions
		_ = json.Unmarshal(args, &o)
		h.held.mu.Lock()
		driving := h.held.runID
		h.held.mu.Unlock()
		return nil, h.heldElsewhere(o.RunID, driving, "start `gaffer serve` to queue runs")
	})
}

func (h *opsHooks) kind() string {
	h.held.mu.Lock()
	defer h.held.mu.Unlock()
	return h.held.kind
}

// answerVerb is how an answer is told: approved, or rejected.
func answerVerb(a nodes.Answer) string {
	if a.Approved {
		return "approved"
	}
	return "rejected"
}
