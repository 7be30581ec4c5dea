package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

type graphResult = graph.Result[state.ExecutionState]

// ErrNotAnswered is what Front.Ask returns when the person left the
// question without an answer (end of input, Ctrl-C): the run is parked.
var ErrNotAnswered = errors.New("host: the question was not answered")

// NewRunID returns "r-YYYYMMDD-xxxxxx": the date and six random hex digits.
func NewRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "r-" + now.UTC().Format("20060102") + "-" + hex.EncodeToString(b)
}

// Start prepares a run of spec (Setup.Prepare) and launches it here:
// how a run queued in serve, or a program's, starts.
func (h *Host) Start(ctx context.Context, spec RunSpec) (Outcome, error) {
	if err := h.inPlaceRefusal(spec); err != nil {
		return Outcome{}, err
	}
	run, err := h.cfg.Setup.Prepare(ctx, h.repo, spec)
	if err != nil {
		return Outcome{}, err
	}
	return h.Launch(ctx, run)
}

// Launch starts a prepared run and drives it here, to its end or its
// first pause: in its own work tree on its own branch (worktree.go), or
// in place in the user's checkout, under the checkout's lock (the one the
// run took for its check, or one taken here before the run checks it).
func (h *Host) Launch(ctx context.Context, run Prepared) (Outcome, error) {
	spec, taken := run.Spec(), run.TakeLock()
	release := func() {
		if taken != nil {
			taken.Unlock()
		}
	}
	if err := CheckRunID(spec.RunID); err != nil {
		release()
		return Outcome{}, errorf(Usage, "%w", err)
	}
	if err := h.inPlaceRefusal(spec); err != nil {
		release()
		return Outcome{}, err
	}
	if spec.InPlace {
		// The work tree's lock comes before the checks of the tree: a second
		// process is told who works there, not that the tree is dirty.
		unlock, err := h.adoptWorkTree(h.repo, spec.RunID, taken)
		if err != nil {
			return Outcome{}, err
		}
		defer unlock()
	} else {
		release()
	}
	defer h.starts(spec.RunID)()
	// From here a cancel from another process reaches the run, whatever
	// it is doing: making its work tree, or its first steps (held.go).
	id := spec.RunID
	ctx, finish := h.held.drive(ctx, id)
	// left: the user's uncommitted changes a run in its own work tree
	// starts without.
	initial, left, err := run.Begin(ctx, h.repo)
	if err != nil {
		return finish(h, Outcome{}, err)
	}
	if spec.InPlace {
		left = nil
	} else {
		if initial, err = h.newWorkTree(ctx, initial, ""); err != nil {
			return finish(h, Outcome{}, err)
		}
	}
	if err := context.Cause(ctx); err != nil {
		return finish(h, Outcome{RunID: id, Kind: Interrupted}, err)
	}
	start := fmt.Sprintf("Run %s started (store %s)", id, h.dir)
	if note := agent.PIDNamespaceNote(); note != "" {
		start += "; " + note // never silently (issue 30)
	}
	h.front.Say(start)
	branch, _ := h.repo.Branch(ctx)
	h.front.Say(WhereLine(initial, branch, h.cfg.Cmd))
	h.front.Say(nodes.LanesLine(initial))
	if len(left) > 0 {
		h.front.Say(LeftOutLine(left))
	}
	return h.driveHeld(ctx, finish, id, initial, h.front.Asks(), func(ctx context.Context) (graphResult, error) { return h.runner.Run(ctx, id, initial) })
}

// starts tells runID as starting (Status) until its first checkpoint: the
// returned function ends that.
func (h *Host) starts(runID string) (end func()) {
	h.mu.Lock()
	if h.starting == nil {
		h.starting = map[string]bool{}
	}
	h.starting[runID] = true
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.starting, runID)
		h.mu.Unlock()
	}
}

// Resume continues a run (the newest unfinished one for an empty RunID)
// with the drivers rebuilt from its stored config. A run waiting for
// approval is asked when the Front asks, and parked otherwise; a run
// waiting for recovery's question is Asking.
func (h *Host) Resume(ctx context.Context, req RunRequest) (Outcome, error) {
	id, snap, err := h.unfinished(ctx, req.RunID, "to resume", true)
	if err != nil {
		return Outcome{}, err
	}
	if err := h.cfg.Setup.CheckKeys(snap.State.Config); err != nil {
		return Outcome{}, err
	}
	if snap.Interrupt != nil && snap.Interrupt.Node == nodes.NodeRecover {
		// Recovery's question is answered with a decision, not at the
		// plan-approval prompt.
		return asking(id, snap.Interrupt.Payload, snap.State)
	}
	if snap.Interrupt != nil {
		if !h.front.Asks() {
			s := snap.State
			return Outcome{RunID: id, Kind: Parked, Message: fmt.Sprintf("run %s is waiting for approval", id), State: &s}, nil
		}
		h.front.Say(fmt.Sprintf("Run %s is waiting for approval.", id))
		return h.drive(ctx, id, snap.State, true, func(context.Context) (graphResult, error) {
			return graphResult{Status: graph.Interrupted, State: snap.State, Seq: snap.Seq, Interrupt: snap.Interrupt}, nil
		})
	}
	h.front.Say(fmt.Sprintf("Resuming run %s from checkpoint %d; next: %s", id, snap.Seq, nodes.NextStep(snap.State, snap.Next)))
	return h.drive(ctx, id, snap.State, h.front.Asks(), func(ctx context.Context) (graphResult, error) { return h.runner.Resume(ctx, id) })
}

// Answer answers what a run waits for (the newest waiting run for an
// empty RunID) and continues the run here: the plan's approval, or with
// a Verdict that Decides recovery's question.
func (h *Host) Answer(ctx context.Context, req AnswerRequest) (Outcome, error) {
	if err := req.Check(); err != nil {
		return Outcome{}, err
	}
	if req.Verdict.Decides() {
		return h.decide(ctx, req)
	}
	id, err := h.Pick(ctx, req.RunID, "waiting for approval", func(s state.RunStatus) bool { return s == state.RunAwaitingApproval })
	if err != nil {
		return Outcome{}, err
	}
	ans := req.Answer()
	var s state.ExecutionState
	if snap, err := h.runner.State(ctx, id); err == nil {
		s = snap.State
		if err := h.checkCommits(ctx, snap); err != nil {
			return Outcome{}, err
		}
		if ans.Approved || ans.Feedback != "" {
			if err := h.cfg.Setup.CheckKeys(snap.State.Config); err != nil { // before the answer is used up
				return Outcome{}, err
			}
		}
	}
	return h.drive(ctx, id, s, h.front.Asks(), func(ctx context.Context) (graphResult, error) {
		return h.runner.Resume(ctx, id, graph.WithResume(ans))
	})
}

// decide answers recovery's question a run waits for and continues the
// run here; a run waiting for its plan's approval is refused.
func (h *Host) decide(ctx context.Context, req AnswerRequest) (Outcome, error) {
	ans := req.Answer()
	id, err := h.Pick(ctx, req.RunID, "waiting for approval", func(s state.RunStatus) bool { return s == state.RunAwaitingApproval })
	if err != nil {
		return Outcome{}, err
	}
	snap, err := h.runner.State(ctx, id)
	if err != nil {
		return Outcome{}, h.refusal(ctx, id, err)
	}
	switch {
	case snap.State.Status.Terminal():
		return Outcome{}, h.refusal(ctx, id, graph.ErrRunDone)
	case snap.Interrupt == nil:
		return Outcome{}, h.refusal(ctx, id, graph.ErrNotInterrupted)
	case snap.Interrupt.Node != nodes.NodeRecover:
		return Outcome{}, NotDeciding(id)
	}
	if err := NotSkipping(id, req.Verdict, snap.Interrupt.Payload); err != nil {
		return Outcome{}, err
	}
	if err := h.checkCommits(ctx, snap); err != nil {
		return Outcome{}, err
	}
	if ans.Approved {
		if err := h.cfg.Setup.CheckKeys(snap.State.Config); err != nil { // before the answer is used up
			return Outcome{}, err
		}
	}
	return h.drive(ctx, id, snap.State, false, func(ctx context.Context) (graphResult, error) {
		return h.runner.Resume(ctx, id, graph.WithResume(ans))
	})
}

// drive runs step (Run, Resume, …) with the Front watching, keeps the run
// going through approvals the Front answers (when asks), and returns
// where the run stopped. While it drives, the control socket's Answer and
// Cancel reach the run (held.go). s is the run's state before the step:
// the run is driven in its work tree (Host.runRepo), which goes once the
// run has ended (its branch stays).
func (h *Host) drive(ctx context.Context, runID string, s state.ExecutionState, asks bool, step func(context.Context) (graphResult, error)) (out Outcome, err error) {
	repo, err := h.runRepo(ctx, s)
	if err != nil {
		return Outcome{}, err
	}
	unlock, err := h.lockWorkTree(repo, runID)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	ctx, finish := h.held.drive(ctx, runID)
	return h.steerHeld(ctx, finish, runID, asks, step)
}

// driveHeld is drive for a run already registered with held (Start
// registers it before its work tree exists): finish is what held.drive
// returned.
func (h *Host) driveHeld(ctx context.Context, finish heldFinish, runID string, s state.ExecutionState, asks bool, step func(context.Context) (graphResult, error)) (Outcome, error) {
	repo, err := h.runRepo(ctx, s)
	if err != nil {
		return finish(h, Outcome{}, err)
	}
	unlock, err := h.lockWorkTree(repo, runID)
	if err != nil {
		return finish(h, Outcome{}, err)
	}
	defer unlock()
	return h.steerHeld(ctx, finish, runID, asks, step)
}

// steerHeld steers a registered run under its work tree's lock, and ends
// its registration (finish) and its work tree when the run ended.
func (h *Host) steerHeld(ctx context.Context, finish heldFinish, runID string, asks bool, step func(context.Context) (graphResult, error)) (out Outcome, err error) {
	defer func() {
		out, err = finish(h, out, err)
		switch {
		case out.State != nil:
			h.endWorkTree(ctx, *out.State)
		case taken(out, err):
			h.DropClone(runID)
		}
	}()
	end := h.front.Watch(runID)
	out, err = h.steer(ctx, runID, asks, step)
	end(out)
	return out, err
}

// steer is drive's loop.
func (h *Host) steer(ctx context.Context, runID string, asks bool, step func(context.Context) (graphResult, error)) (Outcome, error) {
	res, err := step(ctx)
	for err == nil && res.Status == graph.Interrupted {
		if res.Interrupt != nil && res.Interrupt.Node == nodes.NodeRecover {
			return asking(runID, res.Interrupt.Payload, res.State)
		}
		req, perr := approvalRequest(res)
		if perr != nil {
			return Outcome{RunID: runID, Kind: Interrupted}, perr
		}
		s := res.State
		if !asks {
			return Outcome{RunID: runID, Kind: Parked, Message: fmt.Sprintf("run %s is waiting for approval", runID), State: &s}, nil
		}
		remote, stop := h.held.awaitAnswer(runID)
		ans, aerr := h.front.Ask(ctx, req, res.State, remote)
		stop()
		if errors.Is(aerr, ErrNotAnswered) {
			return Outcome{RunID: runID, Kind: Parked, Message: fmt.Sprintf("run %s is waiting for approval", runID), State: &s}, nil
		}
		if aerr != nil {
			return Outcome{RunID: runID, Kind: Interrupted}, aerr
		}
		res, err = h.runner.Resume(ctx, runID, graph.WithResume(ans))
	}
	if err != nil {
		return h.stoppedBy(ctx, runID, err)
	}
	s := res.State
	return outcomeOf(h.dir, s), nil
}

// stoppedBy is the outcome of a run the runtime stopped with err, or the
// refusal err stands for.
func (h *Host) stoppedBy(ctx context.Context, runID string, err error) (Outcome, error) {
	if r := h.refused(runID, err); r != nil {
		return Outcome{RunID: runID, Kind: Interrupted}, r
	}
	if errors.Is(err, graph.ErrInterrupted) {
		snap, serr := h.runner.State(ctx, runID)
		if serr == nil && snap.Interrupt != nil && snap.Interrupt.Node == nodes.NodeRecover {
			return asking(runID, snap.Interrupt.Payload, snap.State)
		}
		return Outcome{RunID: runID, Kind: Parked, Message: fmt.Sprintf("run %s is waiting for approval", runID)}, nil
	}
	stop := func(kind Kind, err error) (Outcome, error) {
		return Outcome{RunID: runID, Kind: kind, Message: err.Error(), Err: err}, nil
	}
	if ctx.Err() == nil {
		// Why the run stopped outlives this process: status shows it
		// (RunStatus.LastError) until the run goes on.
		h.keepLastError(ctx, runID, err.Error())
	}
	switch {
	case ctx.Err() != nil:
		return stop(Interrupted, fmt.Errorf("run %s interrupted; continue it with: %s", runID, h.cfg.Cmd("resume", runID)))
	case ioerr.Machine(err):
		return stop(Interrupted, fmt.Errorf("run %s stopped by the machine, not the agent (no attempt counted): %w; free space or fix the disk, then: %s",
			runID, ioCause(err), h.cfg.Cmd("resume", runID)))
	case errors.Is(err, checkpoint.ErrUnavailable):
		return stop(Stopped, fmt.Errorf("run %s stopped: its store cannot be reached (the machine's fault; no attempt counted): %w\n(once the database answers: %s)",
			runID, err, h.cfg.Cmd("resume", runID)))
	case errors.Is(err, agent.ErrUnavailable):
		return stop(Stopped, fmt.Errorf("run %s stopped by its model provider, not the agent (no attempt counted): %w\n(when the provider answers again: %s)",
			runID, err, h.cfg.Cmd("resume", runID)))
	}
	// Not halted: the state still says running, and resume continues it.
	return stop(Stopped, fmt.Errorf("run %s stopped: %w\n(fix the cause, then: %s)", runID, err, h.cfg.Cmd("resume", runID)))
}

// outcomeOf is the outcome of a run the runtime returned with state s.
func outcomeOf(storeDir string, s state.ExecutionState) Outcome {
	if s.Status.Terminal() {
		markTranscriptEnd(storeDir, s.Run.ID)
	}
	out := Outcome{RunID: s.Run.ID, State: &s}
	switch s.Status {
	case state.RunCompleted:
		out.Kind = Completed
		return out
	case state.RunRejected:
		out.Kind, out.Message = Rejected, fmt.Sprintf("run %s: the plan was rejected", s.Run.ID)
		return out
	case state.RunCancelled:
		out.Kind, out.Message = Cancelled, fmt.Sprintf("run %s was cancelled", s.Run.ID)
		return out
	}
	msg := "no reason recorded"
	if n := len(s.Errors); n > 0 {
		msg = s.Errors[n-1]
		if s.Status == state.RunFailed && n > 1 {
			msg = strings.Join(s.Errors[max(0, n-2):], "\n")
		}
	}
	out.Kind, out.Message = Halted, fmt.Sprintf("run %s %s: %s", s.Run.ID, s.Status, msg)
	return out
}

// asking is the outcome of a run that waits for recovery's question.
func asking(runID string, payload []byte, s state.ExecutionState) (Outcome, error) {
	var q nodes.Question
	if err := json.Unmarshal(payload, &q); err != nil {
		return Outcome{}, fmt.Errorf("read recovery's question: %w", err)
	}
	return Outcome{RunID: runID, Kind: Asking, Question: &q, State: &s,
		Message: fmt.Sprintf("run %s is waiting for a human (%s)", runID, q.Decision)}, nil
}

func approvalRequest(res graphResult) (nodes.ApprovalRequest, error) {
	var req nodes.ApprovalRequest
	if res.Interrupt == nil || res.Interrupt.Node != nodes.NodeApproval {
		return req, fmt.Errorf("run stopped on an unexpected interrupt")
	}
	if err := json.Unmarshal(res.Interrupt.Payload, &req); err != nil {
		return req, fmt.Errorf("read the approval request: %w", err)
	}
	return req, nil
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
