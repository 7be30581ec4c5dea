package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Interrupt kinds, as in PendingInterrupt.Kind.
const (
	KindDynamic = "dynamic" // a node called Interrupt
	KindBefore  = "before"  // WithInterruptBefore
	KindAfter   = "after"   // WithInterruptAfter
	KindStop    = "stopped" // the reader of a Stream stopped: Resume continues, without a value
)

// PendingInterrupt describes what a stopped run waits for.
type PendingInterrupt struct {
	Node    string          // the node that interrupted, or is due (before) or ran (after)
	Kind    string          // KindDynamic, KindBefore or KindAfter
	Payload json.RawMessage // the payload given to Interrupt; nil for static interrupts
	Index   int             // which Interrupt call of the node waits (0-based)
}

// taskKey is the context key of the per-task handle. The handle is the only
// thing the runtime puts in a node's context: it lets Interrupt find the
// answers given so far and Emit find the run's subscribers.
type taskKey struct{}

// task is one execution of one node in one step.
type task struct {
	id      string
	node    string
	runID   string
	step    int
	branch  int      // the task's index in the step
	answers [][]byte // resume values for this task's Interrupt calls, in order
	emit    func(Event)
	token   uint64        // the fencing token of the run's lease (LeaseToken)
	journal *journal      // durable Task results, made on first use (see journalOf)
	src     journalSource // makes the journal
	wseq    uint64        // the checkpoint the step's pending writes hang on
	resumed bool          // an earlier execution of the step may have journaled results
	root    *task         // the task an attempt's handle belongs to; nil for the task itself
	stop    *atomic.Bool  // the run's stop request (streams), for subgraphs

	mu        sync.Mutex
	calls     int            // Interrupt calls made by this attempt
	taskCalls map[string]int // Task calls made by this attempt, by name
	abandoned bool           // the attempt timed out: its Emit calls no longer reach the run
	returned  bool           // the node's call returned
}

// forAttempt returns the handle of one attempt of t: same task, no
// Interrupt calls made yet. Each attempt has its own, so an abandoned attempt
// that goes on in the background cannot disturb the next one.
func (t *task) forAttempt() *task {
	return &task{id: t.id, node: t.node, runID: t.runID, step: t.step, branch: t.branch, answers: t.answers,
		emit: t.emit, token: t.token, stop: t.stop, root: t}
}

// abandon marks an attempt whose deadline passed before the node returned,
// unless the node has returned meanwhile (it reports that with returned).
// An Emit under way finishes first; later ones are dropped.
func (t *task) abandon() (returned bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.returned {
		return true
	}
	t.abandoned = true
	return false
}

// markReturned records that the node's call returned, before its result is
// handed over.
func (t *task) markReturned() {
	t.mu.Lock()
	t.returned = true
	t.mu.Unlock()
}

func withTask(ctx context.Context, t *task) context.Context {
	return context.WithValue(ctx, taskKey{}, t)
}

func taskFrom(ctx context.Context) *task {
	t, _ := ctx.Value(taskKey{}).(*task)
	return t
}

// errNotInNode is returned by Interrupt outside a node.
var errNotInNode = errors.New("graph: Interrupt called outside a node")

// Interrupt stops the run to wait for outside input. The first time a node
// reaches a given Interrupt call it returns (nil, *InterruptError): the node
// must return that error; the run stops with a PendingInterrupt carrying
// payload (encoded as JSON). Resume(ctx, runID, WithResume(v)) runs the node
// again from the start, and this time the call returns v as JSON. A node may
// call Interrupt several times; calls are matched to answers by their order,
// so the node must make them in the same order on every run.
func Interrupt(ctx context.Context, payload any) (json.RawMessage, error) {
	t := taskFrom(ctx)
	if t == nil {
		return nil, errNotInNode
	}
	t.mu.Lock()
	i := t.calls
	t.calls++
	t.mu.Unlock()
	if i < len(t.answers) {
		return json.RawMessage(t.answers[i]), nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: encode interrupt payload: %w", ErrCodec, err)
	}
	return nil, &InterruptError{Index: i, Payload: b}
}

// Ask is Interrupt with a typed answer, as LangGraph's interrupt(): it
// stops the run with payload, and when the run is resumed with
// WithResume(v) it returns v decoded as a T. The node must return Ask's
// error unchanged, as Interrupt's:
//
//	ok, err := graph.Ask[bool](ctx, "ship "+s.Plan+"?")
//	if err != nil {
//		return s, err
//	}
//
// An answer that does not decode as a T is an error matching ErrCodec,
// naming the node: the Resume call fails, the run stays interrupted, and a
// Resume with a well-formed answer runs the node again.
func Ask[T any](ctx context.Context, payload any) (T, error) {
	var v T
	raw, err := Interrupt(ctx, payload)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		node := ""
		if t := taskFrom(ctx); t != nil {
			node = " in node " + t.node
		}
		return v, fmt.Errorf("%w: the answer %s%s is not a %T: %w", ErrCodec, raw, node, v, err)
	}
	return v, nil
}

// LeaseToken is the fencing token of the lease on the run that the
// calling node's runner holds (checkpoint.Lease.Token): the token every
// checkpoint of this execution is written under, so a side effect that
// carries it (a commit's trailer) names the holder that made it. It is 0
// outside a node, and on a runner without a store.
func LeaseToken(ctx context.Context) uint64 {
	if t := taskFrom(ctx); t != nil {
		return t.token
	}
	return 0
}

// forward passes a subgraph's event on to the run, unless the attempt was
// abandoned.
func (t *task) forward(e Event) {
	if t.emit == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.abandoned {
		t.emit(e)
	}
}

// Emit sends a Custom event with name and payload to the runner's
// subscribers. Outside a node it does nothing.
func Emit(ctx context.Context, name string, payload any) {
	t := taskFrom(ctx)
	if t == nil || t.emit == nil {
		return
	}
	t.mu.Lock() // an attempt is not abandoned while its Emit is delivered
	defer t.mu.Unlock()
	if t.abandoned {
		return
	}
	t.emit(Event{Kind: Custom, RunID: t.runID, Step: t.step, Node: t.node, Branch: t.branch, Name: name, Payload: payload})
}

// StepOf returns the step the calling node runs in (1 for the first step
// after the input); 0 outside a node.
func StepOf(ctx context.Context) int {
	if t := taskFrom(ctx); t != nil {
		return t.step
	}
	return 0
}
