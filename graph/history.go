package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

func (r *Runner[S]) snapshot(cp checkpoint.Checkpoint) (Snapshot[S], error) {
	s, err := r.decode(cp)
	if err != nil {
		return Snapshot[S]{}, err
	}
	return Snapshot[S]{
		RunID: cp.RunID, Seq: cp.Seq, Parent: cp.Parent, Step: cp.Step, State: s,
		Ran: cp.Ran, Next: cp.Next, Interrupt: toPending(cp.Interrupt),
		Status: cp.Status, Time: cp.Time, Meta: cp.Meta,
	}, nil
}

// State returns the run's latest checkpoint.
func (r *Runner[S]) State(ctx context.Context, runID string) (Snapshot[S], error) {
	if r.cfg.store == nil {
		return Snapshot[S]{}, ErrNoStore
	}
	cp, err := r.latest(ctx, runID)
	if err != nil {
		return Snapshot[S]{}, err
	}
	return r.snapshot(cp)
}

// History returns up to limit checkpoints of the run, newest first; limit <= 0
// means all of them.
func (r *Runner[S]) History(ctx context.Context, runID string, limit int) ([]Snapshot[S], error) {
	if r.cfg.store == nil {
		return nil, ErrNoStore
	}
	cps, err := r.cfg.store.List(ctx, runID, checkpoint.ListOptions{Limit: max(limit, 0)})
	if err != nil {
		return nil, fmt.Errorf("graph: run %s: history: %w", runID, err)
	}
	if len(cps) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrRunNotFound, runID)
	}
	out := make([]Snapshot[S], 0, len(cps))
	for _, cp := range cps {
		s, err := r.snapshot(cp)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// historyPage is how many checkpoints EachCheckpoint reads at a time.
const historyPage = 32

// EachCheckpoint calls fn with each checkpoint of the run, newest first.
// It reads them from the store historyPage at a time, so that a long run's
// history is never in memory at once: only the page being visited. An
// error from fn stops the walk and is returned.
func (r *Runner[S]) EachCheckpoint(ctx context.Context, runID string, fn func(Snapshot[S]) error) error {
	if r.cfg.store == nil {
		return ErrNoStore
	}
	var before uint64 // 0: from the newest
	for first := true; ; first = false {
		cps, err := r.cfg.store.List(ctx, runID, checkpoint.ListOptions{Limit: historyPage, Before: before})
		if err != nil {
			return fmt.Errorf("graph: run %s: history: %w", runID, err)
		}
		if len(cps) == 0 {
			if first {
				return fmt.Errorf("%w: %s", ErrRunNotFound, runID)
			}
			return nil
		}
		for _, cp := range cps {
			s, err := r.snapshot(cp)
			if err != nil {
				return err
			}
			if err := fn(s); err != nil {
				return err
			}
		}
		before = cps[len(cps)-1].Seq
		if len(cps) < historyPage || before <= 1 {
			return nil
		}
	}
}

// Fork starts run newRunID from checkpoint seq of run runID: its first
// checkpoint holds that checkpoint's state, due nodes and pending interrupt,
// with Meta[MetaForkOf] = "runID@seq". Resume(newRunID) continues it; the
// original run is not touched. Pending writes are not copied: a fan-out step
// interrupted in the original runs all its branches in the fork.
func (r *Runner[S]) Fork(ctx context.Context, runID string, seq uint64, newRunID string) (Snapshot[S], error) {
	if r.cfg.store == nil {
		return Snapshot[S]{}, ErrNoStore
	}
	src, err := r.cfg.store.Get(ctx, runID, seq)
	if err != nil {
		if errors.Is(err, checkpoint.ErrNotFound) {
			return Snapshot[S]{}, fmt.Errorf("%w: %s seq %d: %w", ErrRunNotFound, runID, seq, err)
		}
		return Snapshot[S]{}, fmt.Errorf("graph: fork %s seq %d: %w", runID, seq, err)
	}
	state, err := r.decode(src)
	if err != nil {
		return Snapshot[S]{}, err
	}
	cp := src
	cp.RunID, cp.Seq, cp.Parent, cp.Time = newRunID, 1, 0, r.cfg.clock()
	if cp.Summary, err = r.summarize(cp, state); err != nil {
		return Snapshot[S]{}, err
	}
	cp.Meta = map[string]string{
		MetaSchema: src.Meta[MetaSchema], MetaSource: "fork",
		MetaForkOf: runID + "@" + strconv.FormatUint(seq, 10),
	}
	if v := src.Meta[MetaSends]; v != "" {
		cp.Meta[MetaSends] = v
	}
	if in := src.Interrupt; in != nil {
		c := *in
		c.TaskID = ""
		if i := slices.Index(cp.Next, c.Node); i >= 0 {
			c.TaskID = taskID(newRunID, cp.Step+1, c.Node, i)
		}
		cp.Interrupt = &c
	}
	return r.write(ctx, newRunID, cp, true)
}

// UpdateState writes a checkpoint on top of the run's latest one as if node
// asNode had produced s: the nodes due next follow asNode's edges (routers
// see s). asNode may be START, to restart the run from s. A pending
// interrupt is dropped. Resume continues from the new checkpoint.
func (r *Runner[S]) UpdateState(ctx context.Context, runID string, s S, asNode string) (Snapshot[S], error) {
	if r.cfg.store == nil {
		return Snapshot[S]{}, ErrNoStore
	}
	if _, ok := r.nodes[asNode]; !ok && asNode != START {
		return Snapshot[S]{}, fmt.Errorf("%w: %q", ErrUnknownNode, asNode)
	}
	prev, err := r.latest(ctx, runID)
	if err != nil {
		return Snapshot[S]{}, err
	}
	if n := r.nodes[asNode]; n != nil && (n.command || n.sub != nil) && len(r.edges[asNode]) == 0 && r.conds[asNode] == nil {
		return Snapshot[S]{}, fmt.Errorf("graph: UpdateState as %q: the node routes with a Command, so where the run goes after it is not known; write as a node with edges", asNode)
	}
	next, sends, err := r.route(ctx, []string{asNode}, s, nil)
	if err != nil {
		return Snapshot[S]{}, err
	}
	cp, err := r.newCheckpoint(prev, prev.Step+1, []string{asNode}, next, sends, s, "update")
	if err != nil {
		return Snapshot[S]{}, err
	}
	cp.Meta[MetaAsNode] = asNode
	if cp.Status == StatusInterrupted { // static interrupts are for running steps
		cp.Interrupt, cp.Status = nil, StatusRunning
		if len(next) == 0 {
			cp.Status = StatusDone
		}
	}
	return r.write(ctx, runID, cp, false)
}

// write puts one checkpoint outside a run, under the run's lease.
func (r *Runner[S]) write(ctx context.Context, runID string, cp checkpoint.Checkpoint, fresh bool) (Snapshot[S], error) {
	x, ctx, err := r.start(ctx, runID, execOpts{})
	if err != nil {
		return Snapshot[S]{}, err
	}
	err = func() error {
		if fresh {
			_, lerr := r.cfg.store.Latest(ctx, runID)
			switch {
			case lerr == nil:
				return fmt.Errorf("%w: %s", ErrRunExists, runID)
			case !errors.Is(lerr, checkpoint.ErrNotFound):
				return fmt.Errorf("graph: run %s: %w", runID, lerr)
			}
		}
		if err := r.cfg.store.Put(ctx, cp, x.putOpts(true)); err != nil {
			return fmt.Errorf("graph: run %s: save checkpoint %d: %w", runID, cp.Seq, err)
		}
		x.saved(cp)
		return nil
	}()
	if err = x.stop(ctx, err); err != nil {
		return Snapshot[S]{}, err
	}
	return r.snapshot(cp)
}
