package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Task runs fn once for the step and journals its result, as a task of
// LangGraph's functional API: the result is saved as a pending write of the
// running step (checkpoint.Store.PutWrites, synced under Sync durability)
// before Task returns it, so when the node runs again for the same step —
// after a crash, a retry or an interrupt — Task returns the saved result
// instead of calling fn. name tells a node's tasks apart; a node that calls
// Task with one name several times gets one journal entry per call, matched
// by order, so it must make its calls in the same order each time it runs.
// The result is encoded as JSON, and decoded into T on replay.
//
// What is exactly-once: once Task has returned a result, no later execution
// of the same step of the same run calls fn again; a replay returns the
// same value. What is not: fn itself runs at least once. If the process
// dies while fn runs, or after fn's side effect but before its result is
// saved, fn runs again; fn must make its effect idempotent (an idempotency
// key derived from the run, such as LeaseToken, or a check for its own
// earlier effect) to be exactly-once in the world. A failed fn (an error)
// is not journaled: it runs again. With Exit durability the journal, like
// the checkpoints, reaches the store only when the call returns, so a
// killed process loses it. A Fork does not copy pending writes: its steps
// call fn again. Outside a node Task simply calls fn.
func Task[T any](ctx context.Context, name string, fn func(context.Context) (T, error)) (T, error) {
	t := taskFrom(ctx)
	if t == nil {
		return fn(ctx)
	}
	var zero T
	t.mu.Lock()
	if t.taskCalls == nil {
		t.taskCalls = map[string]int{}
	}
	idx := t.taskCalls[name]
	t.taskCalls[name]++
	t.mu.Unlock()
	j := t.journalOf()
	if j == nil {
		return fn(ctx)
	}
	key := taskJournalPrefix + t.id + ":" + name
	b, ok, err := j.get(ctx, key, idx)
	if err != nil {
		return zero, err
	}
	if ok {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return zero, fmt.Errorf("%w: task %s of %s: decode journaled result: %w", ErrCodec, name, t.node, err)
		}
		t.emitTask(TaskReplayed, name)
		return v, nil
	}
	t.emitTask(TaskStarted, name)
	v, err := fn(ctx)
	if err != nil {
		t.emitTask(TaskFailed, name)
		return v, err
	}
	b, err = json.Marshal(v)
	if err != nil {
		return v, fmt.Errorf("%w: task %s of %s: encode result: %w", ErrCodec, name, t.node, err)
	}
	if err := j.put(ctx, checkpoint.Write{TaskID: key, Index: idx, Node: t.node, Value: b}); err != nil {
		return v, err
	}
	t.emitTask(TaskSaved, name)
	return v, nil
}

func (t *task) emitTask(kind EventKind, name string) {
	if t.emit == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.abandoned {
		t.emit(Event{Kind: kind, RunID: t.runID, Step: t.step, Node: t.node, Branch: t.branch, Name: name})
	}
}

// taskJournalPrefix marks the pending writes that journal Task results.
const taskJournalPrefix = "task:"

// journal holds the Task results of one task of a step: those saved by this
// execution, and those an earlier execution of the step saved (loaded once).
type journal struct {
	load func(ctx context.Context) ([]checkpoint.Write, error) // nil: nothing saved before
	save func(ctx context.Context, w checkpoint.Write) error

	mu     sync.Mutex
	loaded bool
	saved  map[journalKey][]byte
}

type journalKey struct {
	task  string
	index int
}

func (j *journal) get(ctx context.Context, key string, idx int) ([]byte, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.loaded && j.load != nil {
		ws, err := j.load(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, w := range ws {
			if strings.HasPrefix(w.TaskID, taskJournalPrefix) {
				j.savedMap()[journalKey{w.TaskID, w.Index}] = w.Value
			}
		}
	}
	j.loaded = true
	b, ok := j.saved[journalKey{key, idx}]
	return b, ok, nil
}

func (j *journal) put(ctx context.Context, w checkpoint.Write) error {
	if err := j.save(ctx, w); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.savedMap()[journalKey{w.TaskID, w.Index}] = w.Value
	return nil
}

func (j *journal) savedMap() map[journalKey][]byte {
	if j.saved == nil {
		j.saved = map[journalKey][]byte{}
	}
	return j.saved
}

// journalSource makes the Task journal of a task (an *execution).
type journalSource interface {
	newJournal(wseq uint64, resumed bool) *journal
}

// journalOf returns the journal of t's task, shared by all its attempts,
// made on the first Task call (a step that calls no Task allocates none).
func (t *task) journalOf() *journal {
	r := t
	if t.root != nil {
		r = t.root
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.journal == nil && r.src != nil {
		r.journal = r.src.newJournal(r.wseq, r.resumed)
	}
	return r.journal
}

// newJournal returns the Task journal of a task of a step whose pending
// writes hang on wseq; resumed says an earlier execution may have saved some.
func (x *execution[S]) newJournal(wseq uint64, resumed bool) *journal {
	j := &journal{save: func(ctx context.Context, w checkpoint.Write) error { return x.putWrite(ctx, wseq, w) }}
	if resumed && x.r.cfg.store != nil {
		j.load = func(ctx context.Context) ([]checkpoint.Write, error) {
			ws, err := x.r.cfg.store.Writes(ctx, x.runID, wseq)
			if err != nil {
				return nil, fmt.Errorf("graph: run %s: load task journal of seq %d: %w", x.runID, wseq, err)
			}
			return ws, nil
		}
	}
	return j
}

// cmdRecord is a Command saved beside its update in a pending write.
type cmdRecord struct {
	Goto   []string     `json:"goto,omitempty"`
	Parent bool         `json:"parent,omitempty"`
	Sends  []sendRecord `json:"sends,omitempty"`
}

type sendRecord struct {
	Node  string `json:"node"`
	Input []byte `json:"input"`
}

// cmdKey names the value that holds a branch's Command in its pending write.
const cmdKey = "__command__"

// packResult encodes a branch's result for its pending write.
func (r *Runner[S]) packResult(out S, cmd *Command[S]) ([]byte, error) {
	vals, err := r.codec.Encode(out)
	if err != nil {
		return nil, err
	}
	if cmd != nil {
		rec := cmdRecord{Goto: cmd.Goto, Parent: cmd.Parent}
		for _, snd := range cmd.Sends {
			in, err := r.codec.Encode(snd.Input)
			if err != nil {
				return nil, err
			}
			rec.Sends = append(rec.Sends, sendRecord{Node: snd.Node, Input: packValues(in)})
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("%w: command: %w", ErrCodec, err)
		}
		c := make(map[string][]byte, len(vals)+1)
		for k, v := range vals {
			c[k] = v
		}
		c[cmdKey] = b
		vals = c
	}
	return packValues(vals), nil
}

// unpackResult decodes a branch's pending write.
func (r *Runner[S]) unpackResult(b []byte) (taskResult[S], error) {
	var res taskResult[S]
	vals, err := unpackValues(b)
	if err != nil {
		return res, err
	}
	raw, hasCmd := vals[cmdKey]
	delete(vals, cmdKey)
	if res.out, err = r.codec.Decode(vals); err != nil {
		return res, err
	}
	if !hasCmd {
		return res, nil
	}
	var rec cmdRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return res, fmt.Errorf("%w: command: %w", ErrCodec, err)
	}
	cmd := &Command[S]{Update: res.out, Goto: rec.Goto, Parent: rec.Parent}
	for _, sr := range rec.Sends {
		in, err := unpackValues(sr.Input)
		if err != nil {
			return res, err
		}
		s, err := r.codec.Decode(in)
		if err != nil {
			return res, err
		}
		cmd.Sends = append(cmd.Sends, Send[S]{Node: sr.Node, Input: s})
	}
	res.cmd = cmd
	return res, nil
}
