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
	"strings"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Meta keys the runtime writes in every checkpoint.
const (
	MetaSchema    = "schema"      // the state schema version (WithSchemaVersion)
	MetaSource    = "source"      // "input", "loop", "interrupt", "update" or "fork"
	MetaWritesSeq = "writes_seq"  // the checkpoint the step's pending writes hang on, when not this one
	MetaForkOf    = "fork_of"     // "run@seq" a forked run started from
	MetaAsNode    = "as_node"     // the node UpdateState wrote as
	MetaSends     = "sends"       // indexes in Next of the sends due, whose inputs are in Values
	MetaGoParent  = "goto_parent" // a subgraph that ended with a Command to its parent: the parent's nodes, comma-separated
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
		t := &task{id: taskID(cp.RunID, step, n, i), node: n, runID: cp.RunID, step: step, branch: i}
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

// sendAt is a send due in the next step: the index of its node in the
// checkpoint's Next, and its input.
type sendAt[S any] struct {
	index int
	input S
}

// route returns the nodes due after ran produced s: the static edges, the
// routers' choices and the commands' gotos of every node in ran, in order,
// named nodes without duplicates or END, and after them every send (a send
// is never merged with another). cmds, when not nil, holds the Command each
// node of ran returned (nil for none).
func (r *Runner[S]) route(ctx context.Context, ran []string, s S, cmds []*Command[S]) ([]string, []sendAt[S], error) {
	var next []string
	var sends []Send[S]
	add := func(n string) {
		if n != END && !slices.Contains(next, n) {
			next = append(next, n)
		}
	}
	check := func(what, from, to string, targets []string) error {
		if !slices.Contains(targets, to) {
			return fmt.Errorf("graph: %s %s chose %q, which is not a declared target %v", what, from, to, targets)
		}
		if to == END && strings.HasPrefix(what, "send") {
			return fmt.Errorf("graph: %s %s sent to END, which runs nothing", what, from)
		}
		return nil
	}
	for i, from := range ran {
		if i > 0 && slices.Contains(ran[:i], from) {
			// A node that ran in several branches (sends) routes once.
		} else {
			for _, to := range r.edges[from] {
				add(to)
			}
			if c := r.conds[from]; c != nil {
				if err := r.routeCond(ctx, c, from, s, add, &sends, check); err != nil {
					return nil, nil, err
				}
			}
		}
		if i >= len(cmds) || cmds[i] == nil {
			continue
		}
		n := r.nodes[from]
		for _, to := range cmds[i].Goto {
			if err := check("command of", from, to, n.gotos); err != nil {
				return nil, nil, err
			}
			add(to)
		}
		for _, snd := range cmds[i].Sends {
			if err := check("send of command of", from, snd.Node, n.gotos); err != nil {
				return nil, nil, err
			}
			sends = append(sends, snd)
		}
	}
	if len(sends) == 0 {
		return next, nil, nil
	}
	at := make([]sendAt[S], len(sends))
	for i, snd := range sends {
		at[i] = sendAt[S]{index: len(next), input: snd.Input}
		next = append(next, snd.Node)
	}
	return next, at, nil
}

// routeCond asks the conditional edge from a node where to go.
func (r *Runner[S]) routeCond(ctx context.Context, c *condEdge[S], from string, s S, add func(string), sends *[]Send[S], check func(what, from, to string, targets []string) error) error {
	rs, err := c.route(ctx, s)
	if err != nil {
		return fmt.Errorf("graph: router after %s: %w", from, err)
	}
	if len(rs.Nodes) == 0 && len(rs.Sends) == 0 {
		return fmt.Errorf("graph: router after %s chose no target", from)
	}
	for _, to := range rs.Nodes {
		if err := check("router after", from, to, c.targets); err != nil {
			return err
		}
		add(to)
	}
	for _, snd := range rs.Sends {
		if err := check("send router after", from, snd.Node, c.targets); err != nil {
			return err
		}
		*sends = append(*sends, snd)
	}
	return nil
}

// sendKey names the checkpoint value that holds the input of the send at
// index i of Next; MetaSends lists those indexes.
func sendKey(i int) string { return "__send__:" + strconv.Itoa(i) }

// stateValues returns cp's values without the sends' inputs.
func stateValues(cp checkpoint.Checkpoint) map[string][]byte {
	if cp.Meta[MetaSends] == "" {
		return cp.Values
	}
	vals := make(map[string][]byte, len(cp.Values))
	for k, v := range cp.Values {
		if !strings.HasPrefix(k, "__send__:") {
			vals[k] = v
		}
	}
	return vals
}

// sendsOf decodes the inputs of cp's due sends.
func (r *Runner[S]) sendsOf(cp checkpoint.Checkpoint) (map[int]S, error) {
	list := cp.Meta[MetaSends]
	if list == "" {
		return nil, nil
	}
	out := map[int]S{}
	for _, f := range strings.Split(list, ",") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= len(cp.Next) {
			return nil, &CheckpointError{RunID: cp.RunID, Seq: cp.Seq, Err: fmt.Errorf("%w: bad send index %q", ErrCodec, f)}
		}
		vals, err := unpackValues(cp.Values[sendKey(i)])
		if err == nil {
			out[i], err = r.codec.Decode(vals)
		}
		if err != nil {
			return nil, &CheckpointError{RunID: cp.RunID, Seq: cp.Seq, Err: fmt.Errorf("send %d to %s: %w", i, cp.Next[i], err)}
		}
	}
	return out, nil
}

// newCheckpoint returns the checkpoint that follows prev after ran produced s
// in step, with next due. It sets the static interrupt and the status. Values
// are encoded only when the runner has a store.
func (r *Runner[S]) newCheckpoint(prev checkpoint.Checkpoint, step int, ran, next []string, sends []sendAt[S], s S, source string) (checkpoint.Checkpoint, error) {
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
	if len(sends) > 0 && r.cfg.store != nil {
		if err := r.addSends(&cp, sends); err != nil {
			return cp, err
		}
	}
	cp.Interrupt = r.staticInterrupt(cp.RunID, step, ran, next)
	switch {
	case cp.Interrupt != nil: // an interrupt after the last node stops the run too
		cp.Status = StatusInterrupted
	case len(next) == 0:
		cp.Status = StatusDone
	}
	var err error
	cp.Summary, err = r.summarize(cp, s)
	return cp, err
}

// summarize is cp's summary, holding s (nil without WithSummary or a
// store).
func (r *Runner[S]) summarize(cp checkpoint.Checkpoint, s S) ([]byte, error) {
	if r.summary == nil || r.cfg.store == nil {
		return nil, nil
	}
	sum, err := r.summary(Snapshot[S]{RunID: cp.RunID, Seq: cp.Seq, Parent: cp.Parent, Step: cp.Step, State: s,
		Ran: cp.Ran, Next: cp.Next, Time: cp.Time})
	if err != nil {
		return nil, fmt.Errorf("graph: run %s step %d: summary: %w", cp.RunID, cp.Step, err)
	}
	return sum, nil
}

// addSends records the inputs of the sends due next in cp, so that a
// resumed run finds them. (Without a store the execution keeps them.)
func (r *Runner[S]) addSends(cp *checkpoint.Checkpoint, sends []sendAt[S]) error {
	vals := make(map[string][]byte, len(cp.Values)+len(sends))
	for k, v := range cp.Values {
		vals[k] = v
	}
	idx := make([]string, len(sends))
	for i, snd := range sends {
		enc, err := r.codec.Encode(snd.input)
		if err != nil {
			return fmt.Errorf("graph: run %s step %d: send %d to %s: %w", cp.RunID, cp.Step, i, cp.Next[snd.index], err)
		}
		vals[sendKey(snd.index)] = packValues(enc)
		idx[i] = strconv.Itoa(snd.index)
	}
	cp.Values = vals
	cp.Meta[MetaSends] = strings.Join(idx, ",")
	return nil
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
		RunID:   prev.RunID,
		Seq:     prev.Seq + 1,
		Parent:  prev.Seq,
		Step:    prev.Step,
		Next:    prev.Next,
		Values:  prev.Values,
		Summary: prev.Summary,
		Status:  StatusInterrupted,
		Meta:    restampMeta(prev, r.cfg.schema, source),
		Time:    r.cfg.clock(),
	}
}

// restampMeta is the Meta of a checkpoint that keeps prev's due nodes: the
// sends' inputs go with them.
func restampMeta(prev checkpoint.Checkpoint, schema int, source string) map[string]string {
	m := map[string]string{MetaSchema: strconv.Itoa(schema), MetaSource: source}
	if v := prev.Meta[MetaSends]; v != "" {
		m[MetaSends] = v
	}
	return m
}

// interruptCheckpoint records that task t of the step after base stopped on
// ie. The state and the due nodes stay those of base; the step's pending
// writes stay attached to base's writes sequence.
func (r *Runner[S]) interruptCheckpoint(base checkpoint.Checkpoint, t *task, ie *InterruptError) checkpoint.Checkpoint {
	cp := r.restamp(base, "interrupt")
	cp.Meta[MetaWritesSeq] = strconv.FormatUint(writesSeq(base), 10)
	kind := KindDynamic
	if ie.kind != "" {
		kind = ie.kind
	}
	cp.Interrupt = &checkpoint.Interrupt{
		Node: t.node, TaskID: t.id, Kind: kind, Index: ie.Index,
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
