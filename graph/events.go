package graph

import (
	"fmt"
	"sync"
	"time"
)

// EventKind is the kind of an Event.
type EventKind int

// Event kinds.
const (
	RunStarted      EventKind = iota + 1 // Run or Resume started (Payload: "run" or "resume")
	RunFinished                          // the run stopped: done, interrupted (Payload: Status) or failed (Err)
	NodeStarted                          // a node attempt started (Attempt from 1)
	NodeFinished                         // a node attempt ended (Duration; Err on failure)
	CheckpointSaved                      // a checkpoint was written (Seq, Bytes); with Exit durability, when flushed
	RunInterrupted                       // the run stopped on an interrupt (Payload: PendingInterrupt)
	Custom                               // a node called Emit (Name, Payload)
	NodeRetry                            // a failed attempt will be retried (Attempt: the next one; Duration: the wait; Err)
	NodeCached                           // a node's result came from its cache (CachePolicy); it did not run
	TaskStarted                          // a Task call runs its function (Name: the task)
	TaskSaved                            // a Task call's result was journaled (Name)
	TaskReplayed                         // a Task call returned its journaled result without running (Name)
	TaskFailed                           // a Task call's function failed; nothing was journaled (Name)
	StepValues                           // a step's checkpoint holds this state (Payload: S; Node: the nodes that ran, comma-separated); streams only
	NodeUpdate                           // a node's result in a step (Node, Branch; Payload: S, the node's output before the merge; Pending: not checkpointed yet); streams only
)

// StateOf returns the state an event carries, typed: the state after a
// step (StepValues) or a node's result (NodeUpdate), when it is an S. For a
// subgraph's event (Namespace set) S is the subgraph's state type.
//
//	if s, ok := graph.StateOf[State](ev); ok { ... }
func StateOf[S any](e Event) (S, bool) {
	if e.Kind != StepValues && e.Kind != NodeUpdate {
		var zero S
		return zero, false
	}
	s, ok := e.Payload.(S)
	return s, ok
}

// streamOnly reports whether events of kind k go to streams but not to
// subscribers (which predate them and would see each state twice).
func (k EventKind) streamOnly() bool { return k == StepValues || k == NodeUpdate }

func (k EventKind) String() string {
	switch k {
	case RunStarted:
		return "RunStarted"
	case RunFinished:
		return "RunFinished"
	case NodeStarted:
		return "NodeStarted"
	case NodeFinished:
		return "NodeFinished"
	case CheckpointSaved:
		return "CheckpointSaved"
	case RunInterrupted:
		return "RunInterrupted"
	case Custom:
		return "Custom"
	case NodeRetry:
		return "NodeRetry"
	case NodeCached:
		return "NodeCached"
	case TaskStarted:
		return "TaskStarted"
	case TaskSaved:
		return "TaskSaved"
	case TaskReplayed:
		return "TaskReplayed"
	case TaskFailed:
		return "TaskFailed"
	case StepValues:
		return "StepValues"
	case NodeUpdate:
		return "NodeUpdate"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing that happened in a run. Which fields are set depends on Kind.
type Event struct {
	Kind  EventKind
	RunID string
	// Namespace is empty for the run's own events. An event of a subgraph
	// carries the path of subgraph nodes that led to it, outermost first,
	// each "node:step:branch", joined by NamespaceSep; RunID is then the
	// subgraph run's id (see ChildRunID).
	Namespace string
	Step      int
	Seq       uint64
	Node      string
	// Branch is the index of the node's task in its step, for the events
	// of a node (NodeStarted, NodeFinished, NodeRetry, NodeCached,
	// NodeUpdate, Custom and the Task events): it tells apart the branches
	// of one node in a fan-out, each send among them.
	Branch int
	// Pending marks a NodeUpdate streamed when a fan-out branch's pending
	// write was saved, before the step's checkpoint (Seq is then 0).
	Pending  bool
	Name     string
	Payload  any
	Err      error
	Attempt  int
	Duration time.Duration
	Bytes    int
	Time     time.Time
}

// hub delivers events to subscribers synchronously, one event at a time, in
// the order they happen. Events of concurrent fan-out branches interleave.
type hub struct {
	deliverMu sync.Mutex // held while delivering, so subscribers see one event at a time
	mu        sync.Mutex // guards the fields below
	next      int
	subs      map[int]func(Event)
	ids       []int // subscription order
}

func (h *hub) subscribe(fn func(Event)) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int]func(Event){}
	}
	id := h.next
	h.next++
	h.subs[id] = fn
	h.ids = append(h.ids, id)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.remove(id)
		})
	}
}

func (h *hub) remove(id int) {
	delete(h.subs, id)
	for i, x := range h.ids {
		if x == id {
			h.ids = append(h.ids[:i:i], h.ids[i+1:]...)
			break
		}
	}
}

func (h *hub) empty() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ids) == 0
}

// publish delivers e to every subscriber. A subscriber that panics is
// unsubscribed and the run goes on: an observer must not break the run.
func (h *hub) publish(e Event) {
	h.deliverMu.Lock()
	defer h.deliverMu.Unlock()
	h.mu.Lock()
	fns := make([]func(Event), 0, len(h.ids))
	ids := append([]int(nil), h.ids...)
	for _, id := range ids {
		fns = append(fns, h.subs[id])
	}
	h.mu.Unlock()
	for i, fn := range fns {
		if !h.deliver(fn, e) {
			h.mu.Lock()
			h.remove(ids[i])
			h.mu.Unlock()
		}
	}
}

func (h *hub) deliver(fn func(Event), e Event) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fn(e)
	return true
}
