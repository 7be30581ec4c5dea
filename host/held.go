package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// ErrCancelRequested is the cause of a driven run's context when another
// process asked the host to cancel it: a Front's Ask returns it.
var ErrCancelRequested = errors.New("cancelled from another terminal")

// heldRuns are the runs a host drives while it holds the store: the runs
// other processes' Answer and Cancel reach through the socket. A terminal
// drives one at a time; serve's workers drive several, each in its own
// work tree.
type heldRuns struct {
	mu   sync.Mutex
	kind string              // the holding command: run, approve, resume, …
	runs map[string]*heldRun // run id → its drive
}

// heldRun is one run drive is driving.
type heldRun struct {
	cancel context.CancelCauseFunc // cancels that drive's context
	done   chan struct{}           // closed when that drive has ended
	result error                   // a cancel's outcome, read after done
	// answers is non-nil while the run's question waits for the Front;
	// a send on it is the answer. waiting is closed when it stops.
	answers chan nodes.Answer
	waiting chan struct{}
}

// drive registers runID as a run the host drives, and returns its
// context, which Cancel from another process ends, and what to call with
// the drive's outcome: when the run was cancelled that way, it writes the
// cancel checkpoint and returns the Cancelled outcome.
// heldFinish ends a registration of held.drive with the drive's outcome.
type heldFinish = func(h *Host, out Outcome, err error) (Outcome, error)

func (hr *heldRuns) drive(ctx context.Context, runID string) (context.Context, heldFinish) {
	ctx, cancel := context.WithCancelCause(ctx)
	r := &heldRun{cancel: cancel, done: make(chan struct{})}
	hr.mu.Lock()
	if hr.runs == nil {
		hr.runs = map[string]*heldRun{}
	}
	hr.runs[runID] = r
	hr.mu.Unlock()
	return ctx, func(h *Host, out Outcome, err error) (Outcome, error) {
		var result error
		if errors.Is(context.Cause(ctx), ErrCancelRequested) {
			bg := context.WithoutCancel(ctx)
			var cerr error
			if _, serr := h.runner.State(bg, runID); errors.Is(serr, graph.ErrRunNotFound) {
				// Cancelled before its first checkpoint (while its work
				// tree was made): nothing of it is kept.
				cerr = h.discardStart(bg, runID)
			} else {
				_, cerr = h.cancel(bg, runID)
			}
			if cerr != nil {
				result = cerr
			} else {
				h.front.Say(fmt.Sprintf("\nRun %s cancelled from another terminal.", runID))
				out, err = Outcome{RunID: runID, Kind: Cancelled, Message: fmt.Sprintf("run %s was cancelled", runID)}, nil
			}
		}
		cancel(nil)
		hr.mu.Lock()
		if hr.runs[runID] == r {
			delete(hr.runs, runID)
		}
		r.result = result
		hr.mu.Unlock()
		close(r.done)
		return out, err
	}
}

// awaitAnswer tells the socket that runID's question waits for an
// answer: answers delivered on the channel come from other processes.
// stop ends the wait.
func (hr *heldRuns) awaitAnswer(runID string) (answers <-chan nodes.Answer, stop func()) {
	ch, waiting := make(chan nodes.Answer), make(chan struct{})
	hr.mu.Lock()
	r := hr.runs[runID]
	if r == nil {
		hr.mu.Unlock()
		return nil, func() {}
	}
	r.answers, r.waiting = ch, waiting
	hr.mu.Unlock()
	return ch, func() {
		hr.mu.Lock()
		if r.answers == ch {
			r.answers, r.waiting = nil, nil
		}
		hr.mu.Unlock()
		close(waiting)
	}
}

// ids are the runs driven now, sorted.
func (hr *heldRuns) ids() []string {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return slices.Sorted(maps.Keys(hr.runs))
}

// driving names the runs driven now, sorted, joined with ", "; "" for none.
func (hr *heldRuns) driving() string {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	ids := slices.Sorted(maps.Keys(hr.runs))
	return strings.Join(ids, ", ")
}

// find returns the drive of runID, or with runID "" the one run driven
// now (nil for none or several), and the run's id.
func (hr *heldRuns) find(runID string) (*heldRun, string) {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	if runID == "" {
		if len(hr.runs) != 1 {
			return nil, ""
		}
		for id, r := range hr.runs {
			return r, id
		}
	}
	return hr.runs[runID], runID
}

func (hr *heldRuns) holderKind() string {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return hr.kind
}

// holderName is "pid P on host H".
func holderName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on host %s", os.Getpid(), host)
}

// Holder is the Service a host offers other processes on its socket
// while a command holds the store (run, approve, resume, status, …; kind
// names it in the refusals): they read its runs, answer the question of
// the run it drives and cancel runs; starting, resuming or forking runs
// waits until the command ends.
func (h *Host) Holder(kind string) Service {
	h.held.mu.Lock()
	h.held.kind = kind
	h.held.mu.Unlock()
	return holder{h}
}

type holder struct{ h *Host }

// elsewhere is the refusal for what this holder cannot do for runID.
func (x holder) elsewhere(runID, what string) error {
	kind, driving := x.h.held.holderKind(), x.h.held.driving()
	by := fmt.Sprintf("`gaffer %s`, which holds the store", kind)
	if driving != "" {
		by += " to drive run " + driving
	}
	if runID == "" {
		return errorf(Held, "the store is held by %s (%s); %s when that command ends", holderName(), by, what)
	}
	return errorf(Held, "run %s is held by %s (%s); %s when that command ends", runID, holderName(), by, what)
}

func (x holder) Start(_ context.Context, spec RunSpec) (Outcome, error) {
	return Outcome{}, x.elsewhere(spec.RunID, "start it")
}

func (x holder) Submit(_ context.Context, spec RunSpec) (Outcome, error) {
	return Outcome{}, x.elsewhere(spec.RunID, "start `gaffer serve` to queue runs")
}

func (x holder) Resume(_ context.Context, req RunRequest) (Outcome, error) {
	if r, _ := x.h.held.find(req.RunID); req.RunID != "" && r != nil {
		return Outcome{}, errorf(Held, "run %s is held by %s: `gaffer %s` is driving it", req.RunID, holderName(), x.h.held.holderKind())
	}
	return Outcome{}, x.elsewhere(req.RunID, "resume it")
}

func (x holder) Fork(_ context.Context, req ForkRequest) (Forked, error) {
	return Forked{}, x.elsewhere(req.RunID, "fork it")
}

// Answer hands the answer to the run this host asks about.
func (x holder) Answer(ctx context.Context, req AnswerRequest) (Outcome, error) {
	hr := &x.h.held
	r, id := hr.find(req.RunID)
	if r == nil {
		if id = req.RunID; id != "" {
			if snap, err := x.h.runner.State(ctx, id); err == nil && ViewStatus(snap) != state.RunAwaitingApproval {
				return Outcome{}, errorf(Refused, "run %s is not waiting for approval (it is %s)", id, ViewStatus(snap))
			} else if err != nil {
				return Outcome{}, errorf(Refused, "no run %s in %s", id, x.h.dir)
			}
		}
		return Outcome{}, x.elsewhere(id, "answer it")
	}
	hr.mu.Lock()
	answers, waiting := r.answers, r.waiting
	hr.mu.Unlock()
	if answers == nil || req.Verdict.Decides() {
		return Outcome{}, errorf(Refused, "run %s is not waiting for approval (it is running in %s)", id, holderName())
	}
	select {
	case answers <- req.Answer():
	case <-waiting:
		return Outcome{}, errorf(Refused, "run %s is not waiting for approval any more (it was answered in its terminal)", id)
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	return Outcome{RunID: id, Kind: HandedOn, Message: fmt.Sprintf("Run %s %s; gaffer %s (pid %d) continues it.",
		id, AnswerVerb(req.Answer()), hr.holderKind(), os.Getpid())}, nil
}

// Cancel cancels a run this host drives, through its context (drive
// writes the cancel checkpoint when it stops), or writes the cancel
// checkpoint of another run of the store.
func (x holder) Cancel(ctx context.Context, req RunRequest) (Outcome, error) {
	hr := &x.h.held
	r, id := hr.find(req.RunID)
	if r != nil {
		r.cancel(ErrCancelRequested)
		select {
		case <-r.done:
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
		hr.mu.Lock()
		result := r.result
		hr.mu.Unlock()
		if result != nil {
			return Outcome{}, result
		}
		return Outcome{RunID: id, Kind: Cancelled, Message: fmt.Sprintf("Run %s cancelled.", id)}, nil
	}
	return x.h.Cancel(ctx, RunRequest{RunID: req.RunID})
}

func (x holder) Status(ctx context.Context, req RunRequest) (RunStatus, error) {
	return x.h.Status(ctx, req)
}

func (x holder) State(ctx context.Context, req RunRequest) (graph.Snapshot[state.ExecutionState], error) {
	return x.h.State(ctx, req)
}

func (x holder) List(ctx context.Context, req ListRequest) ([]ListEntry, error) {
	return x.h.List(ctx, req)
}

// Delete removes a run of the store that this host does not drive.
func (x holder) Delete(ctx context.Context, req RunRequest) error {
	if r, _ := x.h.held.find(req.RunID); req.RunID != "" && r != nil {
		return errorf(Held, "run %s is held by %s: `gaffer %s` is driving it; cancel it first", req.RunID, holderName(), x.h.held.holderKind())
	}
	return x.h.Delete(ctx, req)
}

// DeleteRuns is the Host's, through x: a run x drives is refused.
func (x holder) DeleteRuns(ctx context.Context, req DeleteRequest) (Deleted, error) {
	return x.h.GitOps(x).DeleteRuns(ctx, req)
}

// Prune is the Host's, through x.
func (x holder) Prune(ctx context.Context, req PruneRequest) (Pruned, error) {
	return x.h.GitOps(x).Prune(ctx, req)
}

// Merge is the Host's, through x.
func (x holder) Merge(ctx context.Context, req MergeRequest) (Merged, error) {
	return x.h.GitOps(x).Merge(ctx, req)
}

// Diff is the Host's, through x.
func (x holder) Diff(ctx context.Context, req DiffRequest) (RunDiff, error) {
	return x.h.GitOps(x).Diff(ctx, req)
}

func (x holder) History(ctx context.Context, req RunRequest) ([]Checkpoint, error) {
	return x.h.History(ctx, req)
}

// AnswerVerb is how an answer is told: approved, or rejected.
func AnswerVerb(a nodes.Answer) string {
	if a.Approved {
		return "approved"
	}
	return "rejected"
}
