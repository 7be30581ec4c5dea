package graph

// This file holds the runtime's decisions, free of I/O: which tasks a step
// runs, which nodes are due after it, and which checkpoint records it. The
// driver in exec.go carries them out: it persists first, then acts.

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Meta keys the runtime writes in every checkpoint.
const (
	MetaSchema    = "schema"     // the state schema version (WithSchemaVersion)
	MetaSource    = "source"     // "input", "loop", "interrupt", "update" or "fork"
	MetaWritesSeq = "writes_seq" // the checkpoint the step's pending writes hang on, when not this one
	MetaForkOf    = "fork_of"    // "run@seq" a forked run started from
	MetaAsNode    = "as_node"    // the node UpdateState wrote as
)

// taskID names one execution of a node: run, step, node and branch index.
// It is the same every time the step is run again, so pending writes saved by
// an earlier attempt of the step are found by a later one.
func taskID(runID string, step int, node string, branch int) string {
	return runID + "/" + strconv.Itoa(step) + "/" + node + "/" + strconv.Itoa(branch)
}

// planTasks returns the tasks of the step that follows cp: one per due node,
// in order. The task named resumeTask gets the interrupt answers.
func planTasks(cp checkpoint.Checkpoint, resumeTask string, answers [][]byte) []*task {
	step := cp.Step + 1
	tasks := make([]*task, len(cp.Next))
	for i, n := range cp.Next {
		t := &task{id: taskID(cp.RunID, step, n, i), node: n, runID: cp.RunID, step: step}
		if t.id == resumeTask {
			t.answers = answers
		}
		tasks[i] = t
	}
	return tasks
}

// writesSeq is the checkpoint whose pending writes belong to the step after cp.
func writesSeq(cp checkpoint.Checkpoint) uint64 {
	if s, ok := cp.Meta[MetaWritesSeq]; ok {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return n
		}
	}
	return cp.Seq
}

// route returns the nodes due after ran produced s: the static edges and the
// routers' choices of every node in ran, in order, without duplicates or END.
func (r *Runner[S]) route(ctx context.Context, ran []string, s S) ([]string, error) {
	var next []string
	add := func(n string) {
		if n != END && !slices.Contains(next, n) {
			next = append(next, n)
		}
	}
	for _, from := range ran {
		for _, to := range r.edges[from] {
			add(to)
		}
		c := r.conds[from]
		if c == nil {
			continue
		}
		targets, err := c.router(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("graph: router after %s: %w", from, err)
		}
		if len(targets) == 0 {
			return nil, fmt.Errorf("graph: router after %s chose no target", from)
		}
		for _, to := range targets {
			if !slices.Contains(c.targets, to) {
				return nil, fmt.Errorf("graph: router after %s chose %q, which is not a declared target %v", from, to, c.targets)
			}
			add(to)
		}
	}
	return next, nil
}

// newCheckpoint returns the checkpoint that follows prev after ran produced s
// in step, with next due. It sets the static interrupt and the status. Values
// are encoded only when the runner has a store.
func (r *Runner[S]) newCheckpoint(prev checkpoint.Checkpoint, step int, ran, next []string, s S, source string) (checkpoint.Checkpoint, error) {
	cp := checkpoint.Checkpoint{
		RunID:  prev.RunID,
		Seq:    prev.Seq + 1,
		Parent: prev.Seq,
		Step:   step,
		Ran:    ran,
		Next:   next,
		Status: StatusRunning,
		Meta:   map[string]string{MetaSchema: strconv.Itoa(r.cfg.schema), MetaSource: source},
		Time:   r.cfg.clock(),
	}
	if r.cfg.store != nil {
		vals, err := r.codec.Encode(s)
		if err != nil {
			return cp, fmt.Errorf("graph: run %s step %d: %w", cp.RunID, step, err)
		}
		cp.Values = vals
	}
	cp.Interrupt = r.staticInterrupt(cp.RunID, step, ran, next)
	switch {
	case len(next) == 0:
		cp.Status, cp.Interrupt = StatusDone, nil
	case cp.Interrupt != nil:
		cp.Status = StatusInterrupted
	}
	return cp, nil
}

// staticInterrupt returns the WithInterruptAfter interrupt of the first node
// in ran, or else the WithInterruptBefore interrupt of the first node in next.
func (r *Runner[S]) staticInterrupt(runID string, step int, ran, next []string) *checkpoint.Interrupt {
	for _, n := range ran {
		if r.after[n] {
			return &checkpoint.Interrupt{Node: n, Kind: KindAfter}
		}
	}
	for i, n := range next {
		if r.before[n] {
			return &checkpoint.Interrupt{Node: n, Kind: KindBefore, TaskID: taskID(runID, step+1, n, i)}
		}
	}
	return nil
}

// restamp returns a checkpoint that follows prev with prev's step, state and
// due nodes, and no interrupt.
func (r *Runner[S]) restamp(prev checkpoint.Checkpoint, source string) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{
		RunID:  prev.RunID,
		Seq:    prev.Seq + 1,
		Parent: prev.Seq,
		Step:   prev.Step,
		Next:   prev.Next,
		Values: prev.Values,
		Status: StatusInterrupted,
		Meta:   map[string]string{MetaSchema: strconv.Itoa(r.cfg.schema), MetaSource: source},
		Time:   r.cfg.clock(),
	}
}

// interruptCheckpoint records that task t of the step after base stopped on
// ie. The state and the due nodes stay those of base; the step's pending
// writes stay attached to base's writes sequence.
func (r *Runner[S]) interruptCheckpoint(base checkpoint.Checkpoint, t *task, ie *InterruptError) checkpoint.Checkpoint {
	cp := r.restamp(base, "interrupt")
	cp.Meta[MetaWritesSeq] = strconv.FormatUint(writesSeq(base), 10)
	cp.Interrupt = &checkpoint.Interrupt{
		Node: t.node, TaskID: t.id, Kind: KindDynamic, Index: ie.Index,
		Payload: ie.Payload, Answers: t.answers[:min(ie.Index, len(t.answers))],
	}
	return cp
}

func toPending(in *checkpoint.Interrupt) *PendingInterrupt {
	if in == nil {
		return nil
	}
	return &PendingInterrupt{Node: in.Node, Kind: in.Kind, Payload: in.Payload, Index: in.Index}
}

// packValues encodes a state's values as one byte string for a pending
// write: for each name in order, uvarint lengths of name and value, then both.
func packValues(vals map[string][]byte) []byte {
	names := make([]string, 0, len(vals))
	size := 0
	for k, v := range vals {
		names = append(names, k)
		size += len(k) + len(v) + 2*binary.MaxVarintLen32
	}
	sort.Strings(names)
	b := make([]byte, 0, size)
	for _, k := range names {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = binary.AppendUvarint(b, uint64(len(vals[k])))
		b = append(b, k...)
		b = append(b, vals[k]...)
	}
	return b
}

func unpackValues(b []byte) (map[string][]byte, error) {
	vals := map[string][]byte{}
	for len(b) > 0 {
		kl, n1 := binary.Uvarint(b)
		if n1 <= 0 {
			return nil, fmt.Errorf("%w: bad pending write", ErrCodec)
		}
		vl, n2 := binary.Uvarint(b[n1:])
		if n2 <= 0 || uint64(len(b)-n1-n2) < kl+vl {
			return nil, fmt.Errorf("%w: bad pending write", ErrCodec)
		}
		b = b[n1+n2:]
		vals[string(b[:kl])] = b[kl : kl+vl]
		b = b[kl+vl:]
	}
	return vals, nil
}
