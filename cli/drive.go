package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

type graphResult = graph.Result[state.ExecutionState]

// answerer answers a run's approval request; nil means: stop and print
// the approve/reject commands (no terminal).
type answerer func(ctx context.Context, req nodes.ApprovalRequest, s state.ExecutionState) (nodes.Answer, error)

// drive runs step (Run, Resume, …) with progress shown, then keeps the
// run going through approvals that ask answers, and turns the outcome
// into an exit code.
func (e *env) drive(ctx context.Context, runID string, ask answerer, step func() (graph.Result[state.ExecutionState], error)) (err error) {
	unlock, err := e.lockWorkTree(runID)
	if err != nil {
		return err
	}
	defer unlock()
	// The control socket reaches the run while it is driven here (ops_held.go).
	finish := e.io.ops.driving(ctx, e, runID)
	defer func() { err = finish(err) }()
	p := newProgress(e.io.Out, e.io.terminal(), e.runner, runID)
	if e.io.screen != nil && e.io.terminal() {
		p.withLive(e.io.screen, time.Now)
		defer p.tick(time.Second)() // the running phase's elapsed time moves between events too
	}
	unsub := e.runner.Subscribe(p.event)
	defer unsub()
	res, err := step()
	for err == nil && res.Status == graph.Interrupted {
		if res.Interrupt != nil && res.Interrupt.Node == nodes.NodeRecover {
			p.tree(ctx, res.State, "")
			return e.question(runID, res.Interrupt.Payload)
		}
		req, perr := approvalRequest(res)
		if perr != nil {
			return perr
		}
		if ask == nil {
			p.tree(ctx, res.State, "")
			return e.awaiting(runID)
		}
		p.pause()
		ans, aerr := ask(ctx, req, res.State)
		if aerr != nil {
			return aerr
		}
		p.resume()
		res, err = e.runner.Resume(ctx, runID, graph.WithResume(ans))
	}
	if err != nil {
		p.end()
		return e.runError(ctx, runID, err)
	}
	return e.outcome(ctx, p, res.State)
}

func approvalRequest(res graph.Result[state.ExecutionState]) (nodes.ApprovalRequest, error) {
	var req nodes.ApprovalRequest
	if res.Interrupt == nil || res.Interrupt.Node != nodes.NodeApproval {
		return req, fmt.Errorf("run stopped on an unexpected interrupt")
	}
	if err := json.Unmarshal(res.Interrupt.Payload, &req); err != nil {
		return req, fmt.Errorf("read the approval request: %w", err)
	}
	return req, nil
}

// awaiting prints what to do with a run that waits for approval and
// returns the exit error for it.
func (e *env) awaiting(runID string) error {
	fmt.Fprintf(e.io.Out, "\nRun %s is waiting for approval of its plan.\n  read it: %s\n  approve: %s\n  reject:  %s\n",
		runID, e.cmd("plan", "show", runID), e.cmd("approve", runID), e.cmd("reject", runID, `--feedback "…"`))
	return exitf(ExitAwaitingApproval, "run %s is waiting for approval", runID)
}

// question prints what recovery asks the human (a reduce-scope proposal,
// a needs-human diagnosis, a narrowing revision it refused) and how to
// answer, and returns the exit error of a run that waits for a human.
func (e *env) question(runID string, payload []byte) error {
	var q nodes.Question
	if err := json.Unmarshal(payload, &q); err != nil {
		return fmt.Errorf("read recovery's question: %w", err)
	}
	fmt.Fprintf(e.io.Out, "\nRun %s needs a human: phase %d, attempt %d: %s\n  why: %s\n", runID, q.Phase, q.Attempt, q.Decision, q.Why)
	for _, p := range q.Problems {
		fmt.Fprintf(e.io.Out, "  - %s\n", p)
	}
	if q.Diagnosis != "" {
		fmt.Fprintf(e.io.Out, "  last failure: %s\n", q.Diagnosis)
	}
	fmt.Fprintf(e.io.Out, "  another attempt: %s\n  stop the run:    %s\n",
		e.cmd("approve", runID, "--decision", "retry", `--feedback "…"`), e.cmd("approve", runID, "--decision", "stop"))
	return exitf(ExitAwaitingApproval, "run %s is waiting for a human (%s)", runID, q.Decision)
}

// waiting prints what the run waits for, recovery's question or its
// plan's approval, and returns the exit error of a run that waits.
func (e *env) waiting(ctx context.Context, runID string) error {
	if snap, err := e.runner.State(ctx, runID); err == nil && snap.Interrupt != nil && snap.Interrupt.Node == nodes.NodeRecover {
		return e.question(runID, snap.Interrupt.Payload)
	}
	return e.awaiting(runID)
}

// runError turns an error from the runtime into a one-line exit error.
func (e *env) runError(ctx context.Context, runID string, err error) error {
	var held *checkpoint.LeaseHeldError
	switch {
	case errors.As(err, &held):
		return exitf(ExitLocked, "run %s is held by pid %d on host %s", runID, held.Holder.PID, held.Holder.Host)
	case errors.Is(err, graph.ErrRunDone):
		return exitf(ExitPrecondition, "run %s has already finished (see %s)", runID, e.cmd("status", runID))
	case errors.Is(err, graph.ErrInterrupted):
		return e.waiting(ctx, runID)
	case errors.Is(err, graph.ErrRunNotFound):
		return exitf(ExitPrecondition, "no run %s in %s", runID, e.storeDir)
	case errors.Is(err, graph.ErrNotInterrupted):
		return exitf(ExitPrecondition, "run %s is not waiting for approval (see %s)", runID, e.cmd("status", runID))
	case errors.Is(err, agent.ErrMissingKey), errors.Is(err, agent.ErrAuth):
		return exitf(ExitPrecondition, "run %s stopped: %w (fix it, then: %s)", runID, lastCause(err), e.cmd("resume", runID))
	case errors.Is(err, nodes.ErrHeadMoved):
		var moved *nodes.HeadMovedError
		if errors.As(err, &moved) {
			err = moved
		}
		return exitf(ExitPrecondition, "run %s stopped, nothing changed: %w; then: %s", runID, err, e.cmd("resume", runID))
	case errors.Is(err, nodes.ErrOutsideEdits):
		var edits *nodes.OutsideEditsError
		if errors.As(err, &edits) {
			err = edits
		}
		return exitf(ExitPrecondition, "run %s stopped, nothing committed: %w: %s (or %s)", runID, err, e.cmd("resume", runID), e.cmd("cancel", runID))
	case ctx.Err() != nil:
		return exitf(ExitFailure, "run %s interrupted; continue it with: %s", runID, e.cmd("resume", runID))
	case ioerr.Machine(err):
		return exitf(ExitFailure, "run %s stopped by the machine, not the agent (no attempt counted): %w; free space or fix the disk, then: %s",
			runID, ioCause(err), e.cmd("resume", runID))
	}
	// Not halted: the state still says running, and resume continues it.
	return exitf(ExitStopped, "run %s stopped: %w\n(fix the cause, then: %s)", runID, err, e.cmd("resume", runID))
}

// outcome prints a finished run and returns its exit error.
func (e *env) outcome(ctx context.Context, p *progress, s state.ExecutionState) error {
	p.tree(ctx, s, "")
	writeCost(e.io.Out, s)
	if s.Status.Terminal() {
		markTranscriptEnd(e.storeDir, s.Run.ID)
	}
	if l := userChangesLine(s); l != "" {
		fmt.Fprintf(e.io.Out, "\n%s\n", l)
	}
	switch s.Status {
	case state.RunCompleted:
		fmt.Fprintf(e.io.Out, "\nRun %s completed. Execution directory: %s\n", s.Run.ID, s.Run.ExecDir)
		return nil
	case state.RunRejected:
		return exitf(ExitRejected, "run %s: the plan was rejected", s.Run.ID)
	case state.RunCancelled:
		return exitf(ExitHalted, "run %s was cancelled", s.Run.ID)
	}
	msg := "no reason recorded"
	if n := len(s.Errors); n > 0 {
		msg = s.Errors[n-1]
		if s.Status == state.RunFailed && n > 1 {
			msg = strings.Join(s.Errors[max(0, n-2):], "\n")
		}
	}
	return exitf(ExitHalted, "run %s %s: %s", s.Run.ID, s.Status, msg)
}

// askTerminal shows the plan and asks approve / reject / feedback on the
// terminal. Ctrl-C while it waits leaves the run waiting for approval.
func (e *env) askTerminal() answerer {
	lines := make(chan string)
	var once sync.Once
	start := func() {
		go func() {
			in := bufio.NewReader(e.io.In)
			for {
				l, err := in.ReadString('\n')
				if l != "" || err == nil {
					lines <- l
				}
				if err != nil {
					close(lines)
					return
				}
			}
		}()
	}
	// read returns a line of the terminal, or an answer given in another
	// terminal (approve or reject through the control socket).
	read := func(ctx context.Context, remote <-chan nodes.Answer) (string, *nodes.Answer, bool) {
		once.Do(start)
		select {
		case l, ok := <-lines:
			return l, nil, ok
		case ans := <-remote:
			fmt.Fprintf(e.io.Out, "\n%s from another terminal\n", answerVerb(ans))
			return "", &ans, true
		case <-ctx.Done():
			return "", nil, false
		}
	}
	return func(ctx context.Context, req nodes.ApprovalRequest, s state.ExecutionState) (nodes.Answer, error) {
		remote, stop := e.io.ops.awaitAnswer(req.RunID)
		defer stop()
		// The whole plan, paged on a terminal: the human approves what
		// they read, not titles.
		var plan strings.Builder
		writePlanText(&plan, s)
		fmt.Fprintln(e.io.Out)
		if err := e.io.page(plan.String()); err != nil {
			return nodes.Answer{}, err
		}
		fmt.Fprintf(e.io.Out, "\n(The plan again at any time: %s)\n", e.cmd("plan", "show", req.RunID))
		for {
			fmt.Fprint(e.io.Out, "\nApprove this plan? [a]pprove, [r]eject, [f]eedback (reject and replan): ")
			line, ans, ok := read(ctx, remote)
			if ans != nil {
				return *ans, nil
			}
			if !ok {
				fmt.Fprintln(e.io.Out)
				if cause := context.Cause(ctx); errors.Is(cause, errCancelRequested) {
					return nodes.Answer{}, cause
				}
				return nodes.Answer{}, e.awaiting(req.RunID)
			}
			next := func(ctx context.Context) (string, *nodes.Answer, bool) { return read(ctx, remote) }
			if ans, done := approvalAnswer(ctx, e.io.Out, next, line); done {
				return ans, nil
			}
		}
	}
}

// ioCause is the short form of a machine I/O error: the failed operation
// on its path ("write PATH: no space left on device") when there is one.
func ioCause(err error) error {
	var full *checkpoint.NoSpaceError
	if errors.As(err, &full) {
		return full
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return err
}
