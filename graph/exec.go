package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// execution is the driver of one Run or Resume call: it carries out the
// decisions of step.go, persisting each checkpoint before the next step.
type execution[S any] struct {
	r      *Runner[S]
	runID  string
	lease  checkpoint.Lease
	leased bool
	cancel context.CancelCauseFunc
	done   chan struct{} // closed to stop the lease renewer
	wg     sync.WaitGroup

	cp      checkpoint.Checkpoint // the latest checkpoint (persisted, or buffered with Exit)
	state   S                     // cp's state
	resumed bool                  // the first step may find pending writes

	resumeTask string    // the task the resume value answers
	answers    [][]byte  // its answers, in Interrupt call order
	sends      map[int]S // inputs of cp's due sends, by index in cp.Next

	execOpts
	goParent string // set when a subgraph ended with a Command to its parent

	bufMu  sync.Mutex  // guards buffer: fan-out branches and tasks write at once
	buffer []pendingOp // Exit durability: writes not yet persisted, in order
}

// execOpts is how a Run or Resume call is driven besides its arguments.
type execOpts struct {
	up      func(Event)  // events go here too (the parent graph, or a stream)
	child   bool         // the run is a subgraph's: a Command to the parent ends it
	stopReq *atomic.Bool // once set, the run stops before its next step, interrupted
}

// emit sends e to the runner's subscribers and up.
func (x *execution[S]) emit(e Event) {
	if x.up == nil {
		if !e.Kind.streamOnly() {
			x.r.emit(e)
		}
		return
	}
	if e.Time.IsZero() {
		e.Time = x.r.cfg.clock()
	}
	if !e.Kind.streamOnly() {
		x.r.emit(e)
	}
	x.up(e)
}

// listening reports whether anyone receives x's events.
func (x *execution[S]) listening() bool { return x.up != nil || !x.r.hub.empty() }

type pendingOp struct {
	cp     *checkpoint.Checkpoint
	seq    uint64
	writes []checkpoint.Write
}

// start acquires the run's lease and starts renewing it.
func (r *Runner[S]) start(ctx context.Context, runID string, o execOpts) (*execution[S], context.Context, error) {
	if runID == "" {
		return nil, ctx, fmt.Errorf("graph: empty run id")
	}
	x := &execution[S]{r: r, runID: runID, done: make(chan struct{}), execOpts: o}
	ctx, x.cancel = context.WithCancelCause(ctx)
	if r.cfg.store == nil {
		return x, ctx, nil
	}
	lease, err := r.cfg.store.Acquire(ctx, runID, r.cfg.owner, r.cfg.leaseTTL)
	if err != nil {
		x.cancel(nil)
		return nil, ctx, fmt.Errorf("graph: run %s: lease: %w", runID, err)
	}
	x.lease, x.leased = lease, true
	x.wg.Add(1)
	go x.renew(ctx)
	return x, ctx, nil
}

// renew keeps the lease alive until the execution stops; losing it cancels the run.
func (x *execution[S]) renew(ctx context.Context) {
	defer x.wg.Done()
	ttl := x.r.cfg.leaseTTL
	t := time.NewTicker(max(ttl/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-x.done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			l, err := x.r.cfg.store.Renew(ctx, x.lease, ttl)
			if err != nil {
				x.cancel(fmt.Errorf("graph: run %s: lease lost: %w", x.runID, err))
				return
			}
			_ = l // the token does not change on renewal
		}
	}
}

// stop flushes buffered writes, releases the lease and returns the call's
// error: err, or the lease loss that cancelled the run.
func (x *execution[S]) stop(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && err != nil {
		err = fmt.Errorf("%w (%w)", cause, err)
	}
	bg := context.WithoutCancel(ctx)
	if ferr := x.flush(bg); ferr != nil {
		err = errors.Join(err, ferr)
	}
	close(x.done)
	x.wg.Wait()
	if x.leased {
		if rerr := x.r.cfg.store.Release(bg, x.lease); rerr != nil {
			err = errors.Join(err, fmt.Errorf("graph: run %s: release lease: %w", x.runID, rerr))
		}
	}
	x.cancel(nil)
	return err
}

func (x *execution[S]) putOpts(sync bool) checkpoint.PutOptions {
	return checkpoint.PutOptions{Sync: sync, Fence: x.lease.Token}
}

// persist writes cp (or buffers it with Exit durability).
func (x *execution[S]) persist(ctx context.Context, cp checkpoint.Checkpoint) error {
	st := x.r.cfg.store
	if st == nil {
		return nil
	}
	if x.r.cfg.durability == Exit {
		x.buffer = append(x.buffer, pendingOp{cp: &cp})
		return nil
	}
	if err := st.Put(ctx, cp, x.putOpts(x.r.cfg.durability == Sync)); err != nil {
		return fmt.Errorf("graph: run %s: save checkpoint %d: %w", x.runID, cp.Seq, err)
	}
	x.saved(cp)
	return nil
}

func (x *execution[S]) saved(cp checkpoint.Checkpoint) {
	if !x.listening() {
		return
	}
	n := 0
	for _, v := range cp.Values {
		n += len(v)
	}
	x.emit(Event{Kind: CheckpointSaved, RunID: cp.RunID, Step: cp.Step, Seq: cp.Seq, Bytes: n})
}

// putWrite saves a finished fan-out branch at once (buffers it with Exit).
func (x *execution[S]) putWrite(ctx context.Context, seq uint64, w checkpoint.Write) error {
	st := x.r.cfg.store
	if st == nil {
		return nil
	}
	if x.r.cfg.durability == Exit {
		x.bufMu.Lock()
		x.buffer = append(x.buffer, pendingOp{seq: seq, writes: []checkpoint.Write{w}})
		x.bufMu.Unlock()
		return nil
	}
	if err := st.PutWrites(ctx, x.runID, seq, []checkpoint.Write{w}, x.putOpts(x.r.cfg.durability == Sync)); err != nil {
		return fmt.Errorf("graph: run %s: save pending write %s: %w", x.runID, w.TaskID, err)
	}
	return nil
}

// flush persists what Exit durability buffered, in order, the last write synced.
func (x *execution[S]) flush(ctx context.Context) error {
	st := x.r.cfg.store
	for i, op := range x.buffer {
		opts := x.putOpts(i == len(x.buffer)-1)
		if op.cp != nil {
			if err := st.Put(ctx, *op.cp, opts); err != nil {
				return fmt.Errorf("graph: run %s: save checkpoint %d: %w", x.runID, op.cp.Seq, err)
			}
			x.saved(*op.cp)
			continue
		}
		if err := st.PutWrites(ctx, x.runID, op.seq, op.writes, opts); err != nil {
			return fmt.Errorf("graph: run %s: save pending writes: %w", x.runID, err)
		}
	}
	x.buffer = nil
	return nil
}

// answerTaskPrefix marks the pending write that saves a resume value.
const answerTaskPrefix = "answer:"

// answer returns the value that answers cp's dynamic interrupt: the one given
// to this Resume, saved first, or else one saved by an earlier Resume.
func (x *execution[S]) answer(ctx context.Context, cp checkpoint.Checkpoint, rc resumeConfig) ([]byte, error) {
	st, in := x.r.cfg.store, cp.Interrupt
	key := answerTaskPrefix + in.TaskID
	if rc.hasValue {
		w := checkpoint.Write{TaskID: key, Index: in.Index, Node: in.Node, Value: rc.value}
		if err := st.PutWrites(ctx, x.runID, cp.Seq, []checkpoint.Write{w}, x.putOpts(true)); err != nil {
			return nil, fmt.Errorf("graph: run %s: save resume value: %w", x.runID, err)
		}
		return rc.value, nil
	}
	ws, err := st.Writes(ctx, x.runID, cp.Seq)
	if err != nil {
		return nil, fmt.Errorf("graph: run %s: load resume value: %w", x.runID, err)
	}
	for _, w := range ws {
		if w.TaskID == key && w.Index == in.Index {
			return w.Value, nil
		}
	}
	return nil, fmt.Errorf("%w: %s waits in node %s", ErrInterrupted, x.runID, in.Node)
}

func (x *execution[S]) result() Result[S] {
	res := Result[S]{Status: Done, State: x.state, Seq: x.cp.Seq, Interrupt: toPending(x.cp.Interrupt), goParent: x.goParent}
	if x.cp.Interrupt != nil {
		res.Status = Interrupted
		x.emit(Event{Kind: RunInterrupted, RunID: x.runID, Step: x.cp.Step, Seq: x.cp.Seq, Node: x.cp.Interrupt.Node, Payload: *res.Interrupt})
	}
	return res
}

// loop runs steps until the run is done, interrupted or fails.
func (x *execution[S]) loop(ctx context.Context) (Result[S], error) {
	for {
		if len(x.cp.Next) == 0 {
			return x.result(), nil
		}
		if x.stopReq != nil && x.stopReq.Load() && x.resumeTask == "" {
			if err := x.stopHere(ctx); err != nil {
				return Result[S]{}, err
			}
			return x.result(), nil
		}
		// A cancelled run stops between steps, at its last checkpoint:
		// with a store, its next write would fail; without one, and with
		// nodes that never look at ctx, nothing else would stop it.
		if err := ctx.Err(); err != nil {
			return Result[S]{}, fmt.Errorf("graph: run %s: %w", x.runID, err)
		}
		if x.cp.Step >= x.r.cfg.stepLimit {
			return Result[S]{}, fmt.Errorf("%w: run %s reached %d steps (WithStepLimit) with %v still due",
				ErrStepLimit, x.runID, x.r.cfg.stepLimit, x.cp.Next)
		}
		if err := x.step(ctx); err != nil {
			return Result[S]{}, err
		}
		if x.cp.Interrupt != nil {
			return x.result(), nil
		}
	}
}

type taskResult[S any] struct {
	out S
	cmd *Command[S]
	err error
}

// step runs the nodes due after x.cp and persists the checkpoint that follows.
func (x *execution[S]) step(ctx context.Context) error {
	base := x.cp
	tasks, held := x.dueTasks(base)
	results := make([]taskResult[S], len(tasks))
	fanned := len(tasks) > 1 // the branches run with pending writes, and stream their updates
	if err := x.runTasks(ctx, base, tasks, results); err != nil {
		return err
	}
	x.resumed = false
	it, ie, err := firstInterrupt(tasks, results)
	if err != nil {
		return err
	}
	if it != nil {
		return x.interrupt(ctx, base, it, ie)
	}
	ran := ranNodes(base, tasks, held)
	stepNo := base.Step + 1
	next, err := x.nextState(ctx, stepNo, ran, tasks, results)
	if err != nil {
		return err
	}
	cmds, parent := commands(results)
	if parent >= 0 {
		return x.endInParent(ctx, base, stepNo, ran, tasks[parent], cmds[parent], next)
	}
	due, sendsNext, err := x.r.route(ctx, ran, next, cmds)
	if err != nil {
		return &NodeError{Node: ran[len(ran)-1], Step: stepNo, Err: err}
	}
	due, sendsNext = addHeld(due, sendsNext, held)
	cp, err := x.r.newCheckpoint(base, stepNo, ran, due, sendsNext, next, "loop")
	if err != nil {
		return err
	}
	if err := x.persist(ctx, cp); err != nil {
		return err
	}
	x.setCheckpoint(cp, next, sendsNext)
	x.emitValues(stepNo, tasks, results, next, fanned)
	return nil
}

// dueTasks plans the tasks of the step after base, handing them the resume
// value's answers once, and returns those to run now with the names of the
// deferred nodes held back.
func (x *execution[S]) dueTasks(base checkpoint.Checkpoint) ([]*task, []string) {
	tasks := planTasks(base, x.resumeTask, x.answers)
	x.resumeTask, x.answers = "", nil
	tasks, held := x.r.holdDeferred(tasks, x.sends)
	wseq := writesSeq(base)
	for _, t := range tasks {
		t.src, t.wseq, t.resumed = x, wseq, x.resumed // the Task journal, made on first use
	}
	return tasks, held
}

// runTasks runs a step's tasks into results: a lone named node on the
// state, a lone send on its input, and several at once (fanOut), each on
// its send's input or the state.
func (x *execution[S]) runTasks(ctx context.Context, base checkpoint.Checkpoint, tasks []*task, results []taskResult[S]) error {
	if len(tasks) == 1 && len(x.sends) == 0 {
		results[0].out, results[0].cmd, results[0].err = x.runTask(ctx, tasks[0], x.state)
		return nil
	}
	ins := make([]S, len(tasks))
	for i, t := range tasks {
		if in, ok := x.sends[t.branch]; ok {
			ins[i] = in
		} else {
			ins[i] = x.state
		}
	}
	if len(tasks) > 1 {
		return x.fanOut(ctx, base, tasks, ins, results)
	}
	results[0].out, results[0].cmd, results[0].err = x.runTask(ctx, tasks[0], ins[0])
	return nil
}

// firstInterrupt returns the first task that called Interrupt, with its
// interrupt, or a *NodeError for the first task that failed otherwise.
func firstInterrupt[S any](tasks []*task, results []taskResult[S]) (*task, *InterruptError, error) {
	var ie *InterruptError
	var it *task
	for i, res := range results {
		var e *InterruptError
		switch {
		case res.err == nil:
		case errors.As(res.err, &e):
			if it == nil {
				ie, it = e, tasks[i]
			}
		default:
			return nil, nil, &NodeError{Node: tasks[i].node, Step: tasks[i].step, Err: res.err}
		}
	}
	return it, ie, nil
}

// interrupt persists the checkpoint of a step whose task it called
// Interrupt, which makes it the latest.
func (x *execution[S]) interrupt(ctx context.Context, base checkpoint.Checkpoint, it *task, ie *InterruptError) error {
	cp := x.r.interruptCheckpoint(base, it, ie)
	if err := x.persist(ctx, cp); err != nil {
		return err
	}
	x.cp = cp
	return nil
}

// ranNodes names the nodes a step ran: base's due nodes, unless some of them
// were held back or the tasks differ from them.
func ranNodes(base checkpoint.Checkpoint, tasks []*task, held []string) []string {
	if len(held) == 0 && len(tasks) == len(base.Next) {
		return base.Next
	}
	ran := make([]string, len(tasks))
	for i, t := range tasks {
		ran[i] = t.node
	}
	return ran
}

// nextState returns the state after a step: a lone named node's result (a
// Partial node's applied as its write), or else the branches merged.
func (x *execution[S]) nextState(ctx context.Context, stepNo int, ran []string, tasks []*task, results []taskResult[S]) (S, error) {
	if len(tasks) != 1 || len(x.sends) > 0 {
		return x.merge(ctx, stepNo, ran, tasks, results)
	}
	r := x.r
	next := results[0].out
	if !r.hasPartial || !r.nodes[tasks[0].node].partial {
		return next, nil
	}
	w := write[S]{node: tasks[0].node, val: next, ops: make([]fieldOp, len(r.plan.fields))}
	r.plan.partialOps(&w.val, w.ops)
	next, err := r.plan.apply(x.state, []write[S]{w})
	if err != nil {
		return next, &NodeError{Node: tasks[0].node, Step: stepNo, Err: err}
	}
	return next, nil
}

// commands returns the Commands a step's tasks returned, by task (nil when
// none did), and the index of the first to the parent graph, or -1.
func commands[S any](results []taskResult[S]) ([]*Command[S], int) {
	var cmds []*Command[S]
	for i, res := range results {
		if res.cmd == nil {
			continue
		}
		if cmds == nil {
			cmds = make([]*Command[S], len(results))
		}
		cmds[i] = res.cmd
		if res.cmd.Parent {
			return cmds, i
		}
	}
	return cmds, -1
}

// addHeld adds the held deferred nodes not already due to due, before the
// sends (whose indexes shift), so that they run in a later step.
func addHeld[S any](due []string, sends []sendAt[S], held []string) ([]string, []sendAt[S]) {
	added := 0
	for _, h := range held {
		if !slices.Contains(due, h) {
			due = append(due, h)
			added++
		}
	}
	if len(sends) > 0 && added > 0 {
		// Sends sit after the named nodes; keep the held ones before them.
		due, sends = reorderHeld(due, sends, added)
	}
	return due, sends
}

// merge combines the branches of a fan-out step: with the merge function,
// or else through the state's reducers.
func (x *execution[S]) merge(ctx context.Context, stepNo int, ran []string, tasks []*task, results []taskResult[S]) (S, error) {
	r := x.r
	var next S
	var err error
	switch {
	case r.merge != nil:
		outs := make([]S, len(results))
		for i := range results {
			outs[i] = results[i].out
		}
		next, err = r.merge(ctx, x.state, outs)
	case r.mergeB != nil:
		next, err = r.mergeB(ctx, x.state, x.branches(tasks, results))
	case r.plan != nil && r.plan.reducing:
		next, err = x.reduce(tasks, results)
	default:
		return next, fmt.Errorf("%w: run %s step %d ran %v", ErrNoMerge, x.runID, stepNo, ran)
	}
	if err != nil {
		return next, fmt.Errorf("graph: run %s step %d: merge: %w", x.runID, stepNo, err)
	}
	return next, nil
}

// branches describes a step's branches for a BranchMergeFunc.
func (x *execution[S]) branches(tasks []*task, results []taskResult[S]) []Branch[S] {
	bs := make([]Branch[S], len(tasks))
	sends := 0
	for i, t := range tasks {
		b := Branch[S]{Node: t.node, Index: t.branch, Send: -1, Input: x.state, Result: results[i].out}
		if in, ok := x.sends[t.branch]; ok {
			b.Send, b.Input = sends, in
			sends++
		}
		bs[i] = b
	}
	return bs
}

// reduce combines a step's branches through the state's reducers. A
// Partial node's result is its write, and so is a send's (it ran on its
// own input, not on the state); a named node that returned the whole state
// wrote what it changed (fieldPlan.diff).
func (x *execution[S]) reduce(tasks []*task, results []taskResult[S]) (S, error) {
	p := x.r.plan
	nf := len(p.fields)
	ops := make([]fieldOp, len(tasks)*nf)
	ws := make([]write[S], len(tasks))
	for i, t := range tasks {
		w := &ws[i]
		w.node, w.ops = t.node, ops[i*nf:(i+1)*nf:(i+1)*nf]
		_, send := x.sends[t.branch]
		if send || x.r.nodes[t.node].partial {
			w.val = results[i].out
			p.partialOps(&w.val, w.ops)
		} else {
			p.diff(&x.state, &results[i].out, &w.val, w.ops, true)
		}
	}
	return p.apply(x.state, ws)
}

// setCheckpoint makes cp, holding state s with sends due, the latest.
func (x *execution[S]) setCheckpoint(cp checkpoint.Checkpoint, s S, sends []sendAt[S]) {
	x.cp, x.state, x.sends = cp, s, nil
	if len(sends) > 0 {
		x.sends = make(map[int]S, len(sends))
		for _, snd := range sends {
			x.sends[snd.index] = snd.input
		}
	}
}

// endInParent ends a subgraph whose node returned a Command to the parent:
// the checkpoint it writes is the subgraph's last, and names the parent's
// nodes due next.
func (x *execution[S]) endInParent(ctx context.Context, base checkpoint.Checkpoint, stepNo int, ran []string, t *task, cmd *Command[S], next S) error {
	if !x.child {
		return &NodeError{Node: t.node, Step: stepNo, Err: fmt.Errorf("%w: the run is not a subgraph's", ErrNoParent)}
	}
	n := x.r.nodes[t.node]
	for _, to := range cmd.Goto {
		if !slices.Contains(n.parentTargets, to) {
			return &NodeError{Node: t.node, Step: stepNo, Err: fmt.Errorf("graph: command to the parent chose %q, which is not declared with ParentTargets %v", to, n.parentTargets)}
		}
	}
	if len(cmd.Sends) > 0 {
		return &NodeError{Node: t.node, Step: stepNo, Err: errors.New("graph: a command to the parent cannot send: its input type is the parent's")}
	}
	cp, err := x.r.newCheckpoint(base, stepNo, ran, nil, nil, next, "loop")
	if err != nil {
		return err
	}
	x.goParent = strings.Join(cmd.Goto, ",")
	cp.Meta[MetaGoParent] = x.goParent
	if err := x.persist(ctx, cp); err != nil {
		return err
	}
	x.setCheckpoint(cp, next, nil)
	return nil
}

// reorderHeld moves the last held named nodes of due before the sends,
// shifting the sends' indexes.
func reorderHeld[S any](due []string, sends []sendAt[S], held int) ([]string, []sendAt[S]) {
	first := len(due) - held - len(sends) // where the sends start
	out := make([]string, 0, len(due))
	out = append(out, due[:first]...)
	out = append(out, due[len(due)-held:]...)
	out = append(out, due[first:len(due)-held]...)
	for i := range sends {
		sends[i].index += held
	}
	return out, sends
}

// holdDeferred returns the tasks to run now: all of them, unless deferred
// nodes are due beside others, which then wait (their names are held). A
// send to a deferred node is not held: its input goes with it.
func (r *Runner[S]) holdDeferred(tasks []*task, sends map[int]S) ([]*task, []string) {
	if !r.hasDeferred {
		return tasks, nil
	}
	var now []*task
	var held []string
	for _, t := range tasks {
		if _, send := sends[t.branch]; r.nodes[t.node].deferred && !send {
			held = append(held, t.node)
		} else {
			now = append(now, t)
		}
	}
	if len(now) == 0 || len(held) == 0 {
		return tasks, nil
	}
	return now, held
}

// fanOut runs tasks concurrently, each on its input. A branch whose pending
// write an earlier attempt of the step saved is not run again; every branch
// that finishes is saved as a pending write at once.
func (x *execution[S]) fanOut(ctx context.Context, base checkpoint.Checkpoint, tasks []*task, ins []S, results []taskResult[S]) error {
	r := x.r
	wseq := writesSeq(base)
	prior := map[string][]byte{}
	if x.resumed && r.cfg.store != nil {
		ws, err := r.cfg.store.Writes(ctx, x.runID, wseq)
		if err != nil {
			return fmt.Errorf("graph: run %s: load pending writes of seq %d: %w", x.runID, wseq, err)
		}
		for _, w := range ws {
			prior[w.TaskID] = w.Value
		}
	}
	var done []bool // the branches an earlier attempt saved, streamed before the others start
	if len(prior) > 0 {
		done = make([]bool, len(tasks))
		for i, t := range tasks {
			if b, ok := prior[t.id]; ok {
				res, err := r.unpackResult(b)
				if err != nil {
					return &CheckpointError{RunID: x.runID, Seq: wseq, Err: fmt.Errorf("pending write %s: %w", t.id, err)}
				}
				results[i], done[i] = res, true
				x.emitPending(t, res.out)
			}
		}
	}
	var wg sync.WaitGroup
	for i, t := range tasks {
		if done != nil && done[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, cmd, err := x.runTask(ctx, t, ins[i])
			if err == nil && r.cfg.store != nil {
				var b []byte
				b, err = r.packResult(out, cmd)
				if err == nil {
					err = x.putWrite(ctx, wseq, checkpoint.Write{TaskID: t.id, Node: t.node, Value: b})
				}
			}
			results[i] = taskResult[S]{out: out, cmd: cmd, err: err}
			if err == nil {
				x.emitPending(t, out)
			}
		}()
	}
	wg.Wait()
	return nil
}

// runTask runs one task with the node's cache, timeout and retry policy.
func (x *execution[S]) runTask(ctx context.Context, t *task, in S) (S, *Command[S], error) {
	r := x.r
	n := r.nodes[t.node]
	t.emit, t.token, t.stop = x.emit, x.lease.Token, x.stopReq
	var key string
	if n.cache != nil {
		var hit bool
		var out S
		key, out, hit = cacheLookup(r, n, in)
		if hit {
			x.emit(Event{Kind: NodeCached, RunID: t.runID, Step: t.step, Node: t.node, Branch: t.branch})
			return out, nil, nil
		}
	}
	attempts := max(1, n.retry.MaxAttempts)
	wait := n.retry.Backoff
	for attempt := 1; ; attempt++ {
		x.emit(Event{Kind: NodeStarted, RunID: t.runID, Step: t.step, Node: t.node, Branch: t.branch, Attempt: attempt})
		start := r.cfg.clock()
		out, cmd, err := x.attempt(ctx, n, t, in)
		x.emit(Event{Kind: NodeFinished, RunID: t.runID, Step: t.step, Node: t.node, Branch: t.branch, Attempt: attempt, Err: err, Duration: r.cfg.clock().Sub(start)})
		if err == nil && n.cache != nil {
			cacheStore(r, n, key, in, out)
		}
		if err == nil || attempt >= attempts || !retryable(ctx, n.retry, err) {
			return out, cmd, err
		}
		x.emit(Event{Kind: NodeRetry, RunID: t.runID, Step: t.step, Node: t.node, Branch: t.branch, Attempt: attempt + 1, Err: err, Duration: wait})
		if serr := r.cfg.sleep(ctx, wait); serr != nil {
			return out, cmd, fmt.Errorf("graph: waiting to retry: %w (after %w)", serr, err)
		}
		wait *= 2
		if n.retry.MaxBackoff > 0 && wait > n.retry.MaxBackoff {
			wait = n.retry.MaxBackoff
		}
	}
}

func retryable(ctx context.Context, p RetryPolicy, err error) bool {
	var ie *InterruptError
	if errors.As(err, &ie) || ctx.Err() != nil {
		return false
	}
	return p.Retryable == nil || p.Retryable(err)
}

// errAttemptDeadline is the cause of the context a node's Timeout sets, so
// that the node's own deadline is told apart from its caller's.
var errAttemptDeadline = errors.New("graph: attempt deadline")

// attempt runs the node once, under its timeout, turning a panic into an
// error. Without a timeout the node runs on the caller's goroutine. With one
// it runs on its own goroutine and the attempt ends when the deadline
// passes, whether or not the node returns: the attempt fails with
// ErrNodeTimeout and whatever the node returns later is dropped (a node that
// returned just as the deadline passed keeps its result). The node's
// goroutine is not stopped (Go cannot stop one); it finishes in the
// background, its Emit calls no longer reach subscribers, and what its
// Interrupt calls return is dropped with its result.
func (x *execution[S]) attempt(ctx context.Context, n *node[S], t *task, in S) (S, *Command[S], error) {
	a := t.forAttempt()
	if n.timeout <= 0 {
		return callNode(ctx, n, a, in)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, n.timeout, errAttemptDeadline)
	defer cancel()
	done := make(chan taskResult[S], 1) // buffered: an abandoned node never blocks
	go func() {
		out, cmd, err := callNode(ctx, n, a, in)
		a.markReturned()
		done <- taskResult[S]{out: out, cmd: cmd, err: err}
	}()
	finished := func(res taskResult[S]) (S, *Command[S], error) {
		if res.err != nil && context.Cause(ctx) == errAttemptDeadline {
			res.err = fmt.Errorf("%w: %s after %v: %w", ErrNodeTimeout, n.name, n.timeout, res.err)
		}
		return res.out, res.cmd, res.err
	}
	select {
	case res := <-done:
		return finished(res)
	case <-ctx.Done():
	}
	if context.Cause(ctx) != errAttemptDeadline {
		// The caller's ctx ended (cancelled, or its own deadline): the
		// node is told through its ctx, and the run waits for it as before.
		return finished(<-done)
	}
	if a.abandon() {
		return finished(<-done) // it returned as the deadline passed
	}
	var zero S
	return zero, nil, fmt.Errorf("%w: %s after %v (the attempt was abandoned; its late result is dropped): %w",
		ErrNodeTimeout, n.name, n.timeout, context.DeadlineExceeded)
}

// callNode calls the node, turning a panic into an error.
func callNode[S any](ctx context.Context, n *node[S], t *task, in S) (out S, cmd *Command[S], err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("graph: node %s panicked: %v", n.name, p)
		}
	}()
	return n.run(withTask(ctx, t), in)
}

// decode turns cp back into a state, checking the schema version.
func (r *Runner[S]) decode(cp checkpoint.Checkpoint) (S, error) {
	var s S
	if v := cp.Meta[MetaSchema]; v != strconv.Itoa(r.cfg.schema) {
		return s, &CheckpointError{RunID: cp.RunID, Seq: cp.Seq,
			Err: fmt.Errorf("%w %q (the runner uses %d)", ErrSchemaVersion, v, r.cfg.schema)}
	}
	s, err := r.codec.Decode(stateValues(cp))
	if err != nil {
		return s, &CheckpointError{RunID: cp.RunID, Seq: cp.Seq, Err: err}
	}
	return s, nil
}

// emitValues sends a step's NodeUpdate events, one per branch, unless the
// branches sent theirs as they finished (fanned), and its StepValues event,
// when anyone listens.
func (x *execution[S]) emitValues(step int, tasks []*task, results []taskResult[S], s S, fanned bool) {
	if x.up == nil {
		return
	}
	if !fanned {
		for i, res := range results {
			x.emit(Event{Kind: NodeUpdate, RunID: x.runID, Step: step, Seq: x.cp.Seq, Node: tasks[i].node, Branch: tasks[i].branch, Payload: res.out})
		}
	}
	node := tasks[0].node
	if len(tasks) > 1 {
		names := make([]string, len(tasks))
		for i, t := range tasks {
			names[i] = t.node
		}
		node = strings.Join(names, ",")
	}
	x.emit(Event{Kind: StepValues, RunID: x.runID, Step: step, Seq: x.cp.Seq, Node: node, Payload: s})
}

// emitPending streams the update of a fan-out branch whose pending write is
// saved, before the step's checkpoint.
func (x *execution[S]) emitPending(t *task, out S) {
	if x.up != nil {
		x.emit(Event{Kind: NodeUpdate, RunID: x.runID, Step: t.step, Node: t.node, Branch: t.branch, Pending: true, Payload: out})
	}
}

// stopHere stops the run before its next step, as a stream whose reader
// stopped asks: a checkpoint with a KindStop interrupt, which Resume
// continues without a value.
func (x *execution[S]) stopHere(ctx context.Context) error {
	cp := x.r.restamp(x.cp, "interrupt")
	cp.Ran = nil
	cp.Meta[MetaWritesSeq] = strconv.FormatUint(writesSeq(x.cp), 10)
	cp.Interrupt = &checkpoint.Interrupt{Node: x.cp.Next[0], Kind: KindStop}
	if err := x.persist(ctx, cp); err != nil {
		return err
	}
	x.cp = cp
	return nil
}
