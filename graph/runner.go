package graph

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Status is how a Run or Resume call ended.
type Status int

const (
	// Done means the run reached END.
	Done Status = iota + 1
	// Interrupted means the run waits on an interrupt; see Result.Interrupt.
	Interrupted
)

func (s Status) String() string {
	switch s {
	case Done:
		return "done"
	case Interrupted:
		return "interrupted"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Checkpoint statuses, as in Snapshot.Status and checkpoint.Checkpoint.Status.
const (
	StatusRunning     = "running"
	StatusInterrupted = "interrupted"
	StatusDone        = "done"
)

// Result is the outcome of Run or Resume.
type Result[S any] struct {
	Status    Status
	State     S
	Seq       uint64            // the run's latest checkpoint
	Interrupt *PendingInterrupt // set when Status is Interrupted

	goParent string          // a subgraph's run that ended with a Command to its parent: the parent's nodes
	stopErr  *InterruptError // a subgraph's interrupt, as its parent node reports it
}

// Snapshot is one checkpoint of a run, decoded.
type Snapshot[S any] struct {
	RunID     string
	Seq       uint64
	Parent    uint64
	Step      int
	State     S
	Ran       []string // nodes that produced this checkpoint (START for the input)
	Next      []string // nodes due next; empty when the run is done
	Interrupt *PendingInterrupt
	Status    string // StatusRunning, StatusInterrupted or StatusDone
	Time      time.Time
	Meta      map[string]string
}

// Runner runs a compiled graph. It is safe for concurrent use by several
// goroutines, on different runs; the store's lease keeps one writer per run.
type Runner[S any] struct {
	nodes         map[string]*node[S]
	order         []string // node names in the order they were added
	edges         map[string][]string
	conds         map[string]*condEdge[S]
	cfg           config
	codec         Codec[S]
	summary       SummaryFunc[S] // nil: checkpoints carry no summary
	merge         MergeFunc[S]
	mergeB        BranchMergeFunc[S]
	plan          *fieldPlan[S] // the state's reducers; nil for a state that is not a struct
	before, after map[string]bool
	hasDeferred   bool
	hasPartial    bool // some node is Partial
	cache         *nodeCache
	hub           hub
}

// Subscribe calls fn for every event of every run of r, synchronously and in
// order, until unsubscribe is called. fn must be quick: the run waits for it.
// A subscriber that panics is unsubscribed and the run goes on.
func (r *Runner[S]) Subscribe(fn func(Event)) (unsubscribe func()) {
	return r.hub.subscribe(fn)
}

func (r *Runner[S]) emit(e Event) {
	if r.hub.empty() {
		return
	}
	if e.Time.IsZero() {
		e.Time = r.cfg.clock()
	}
	r.hub.publish(e)
}

// Run starts the run runID from initial and runs it until it finishes or
// stops on an interrupt. The run's first checkpoint holds initial, with the
// nodes after START due. Run fails with ErrRunExists if the store already
// holds runID.
func (r *Runner[S]) Run(ctx context.Context, runID string, initial S) (res Result[S], err error) {
	return r.run(ctx, runID, initial, execOpts{})
}

func (r *Runner[S]) run(ctx context.Context, runID string, initial S, o execOpts) (res Result[S], err error) {
	x, ctx, err := r.start(ctx, runID, o)
	if err != nil {
		return res, err
	}
	x.emit(Event{Kind: RunStarted, RunID: runID, Payload: "run"})
	defer func() {
		err = x.finish(ctx, res, err)
	}()

	if r.cfg.store != nil {
		_, lerr := r.cfg.store.Latest(ctx, runID)
		switch {
		case lerr == nil:
			return res, fmt.Errorf("%w: %s", ErrRunExists, runID)
		case !errors.Is(lerr, checkpoint.ErrNotFound):
			return res, fmt.Errorf("graph: run %s: %w", runID, lerr)
		}
	}
	next, sends, err := r.route(ctx, []string{START}, initial, nil)
	if err != nil {
		return res, err
	}
	cp, err := r.newCheckpoint(checkpoint.Checkpoint{RunID: runID}, 0, []string{START}, next, sends, initial, "input")
	if err != nil {
		return res, err
	}
	cp.Seq, cp.Parent = 1, 0
	if err := x.persist(ctx, cp); err != nil {
		return res, err
	}
	x.setCheckpoint(cp, initial, sends)
	if x.up != nil {
		x.emit(Event{Kind: StepValues, RunID: runID, Seq: cp.Seq, Node: START, Payload: initial})
	}
	if cp.Interrupt != nil {
		return x.result(), nil
	}
	return x.loop(ctx)
}

// Resume continues a run from its latest checkpoint with the nodes due next.
//
//   - A run that waits on a dynamic interrupt needs WithResume(value): the
//     interrupted node runs again and its Interrupt call returns value.
//     The value is saved (as a pending write on the interrupt's checkpoint)
//     before the node runs, so if the process dies before the node's step
//     is checkpointed, Resume without a value uses the saved answer; the
//     first answer saved is the one kept. Without a value or a saved answer
//     Resume fails with ErrInterrupted.
//   - A run stopped by WithInterruptBefore/After continues with or without a
//     value (the value is not used).
//   - A run that was not interrupted (it crashed, failed or was cancelled)
//     simply continues; with WithResume it fails with ErrNotInterrupted.
//   - A finished run fails with ErrRunDone; use State for its final state.
func (r *Runner[S]) Resume(ctx context.Context, runID string, opts ...ResumeOption) (res Result[S], err error) {
	var rc resumeConfig
	for _, o := range opts {
		o(&rc)
	}
	if rc.err != nil {
		return res, rc.err
	}
	return r.resume(ctx, runID, rc, execOpts{})
}

func (r *Runner[S]) resume(ctx context.Context, runID string, rc resumeConfig, o execOpts) (res Result[S], err error) {
	if r.cfg.store == nil {
		return res, ErrNoStore
	}
	x, ctx, err := r.start(ctx, runID, o)
	if err != nil {
		return res, err
	}
	x.emit(Event{Kind: RunStarted, RunID: runID, Payload: "resume"})
	defer func() {
		err = x.finish(ctx, res, err)
	}()

	cp, err := r.latest(ctx, runID)
	if err != nil {
		return res, err
	}
	state, err := r.decode(cp)
	if err != nil {
		return res, err
	}
	// Stores need not return a summary: the checkpoints that keep this
	// one's state (an interrupt's) carry it, made again.
	if cp.Summary, err = r.summarize(cp, state); err != nil {
		return res, err
	}
	for _, n := range cp.Next {
		if _, ok := r.nodes[n]; !ok {
			return res, &CheckpointError{RunID: runID, Seq: cp.Seq, Err: fmt.Errorf("%w %q is due: was the run started by another graph?", ErrUnknownNode, n)}
		}
	}
	switch {
	case len(cp.Next) == 0 && cp.Interrupt != nil && cp.Interrupt.Kind == KindAfter:
		// The run stopped after its last node: resuming finishes it.
		end := r.restamp(cp, "resume")
		end.Status = StatusDone
		if err := x.persist(ctx, end); err != nil {
			return res, err
		}
		x.cp, x.state = end, state
		return x.result(), nil
	case len(cp.Next) == 0:
		return res, fmt.Errorf("%w: %s (seq %d)", ErrRunDone, runID, cp.Seq)
	case rc.hasValue && cp.Interrupt == nil:
		return res, fmt.Errorf("%w: %s (seq %d)", ErrNotInterrupted, runID, cp.Seq)
	case cp.Interrupt != nil && cp.Interrupt.Kind == KindDynamic:
		value, err := x.answer(ctx, cp, rc)
		if err != nil {
			return res, err
		}
		x.resumeTask = cp.Interrupt.TaskID
		x.answers = append(append([][]byte(nil), cp.Interrupt.Answers...), value)
	}
	sends, err := r.sendsOf(cp)
	if err != nil {
		return res, err
	}
	x.cp, x.state, x.sends, x.resumed = cp, state, sends, true
	if cp.Interrupt != nil && cp.Interrupt.Kind == KindAfter {
		// The run stopped after a node; a node due next may want a stop before it.
		if in := r.staticInterrupt(runID, cp.Step, nil, cp.Next); in != nil {
			stop := r.restamp(cp, "interrupt")
			stop.Interrupt = in
			if err := x.persist(ctx, stop); err != nil {
				return res, err
			}
			x.cp = stop
			return x.result(), nil
		}
	}
	return x.loop(ctx)
}

// finish stops the execution and sends RunFinished; it returns the call's error.
func (x *execution[S]) finish(ctx context.Context, res Result[S], err error) error {
	err = x.stop(ctx, err)
	e := Event{Kind: RunFinished, RunID: x.runID, Seq: res.Seq, Err: err}
	if err == nil {
		e.Payload = res.Status
	}
	x.emit(e)
	return err
}

// latest loads the run's newest checkpoint.
func (r *Runner[S]) latest(ctx context.Context, runID string) (checkpoint.Checkpoint, error) {
	cp, err := r.cfg.store.Latest(ctx, runID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return cp, fmt.Errorf("%w: %s: %w", ErrRunNotFound, runID, err)
	}
	if err != nil {
		return cp, fmt.Errorf("graph: run %s: %w", runID, err)
	}
	return cp, nil
}
