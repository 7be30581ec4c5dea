package graph

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
)

// StreamMode selects the events a Stream yields, as LangGraph's stream modes.
// RunStarted, RunInterrupted and RunFinished are yielded in every mode.
type StreamMode int

const (
	// StreamValues yields StepValues: the state after each step (the input first).
	StreamValues StreamMode = iota + 1
	// StreamUpdates yields NodeUpdate: each node's result in each step.
	StreamUpdates
	// StreamCustom yields Custom: what nodes send with Emit.
	StreamCustom
	// StreamTasks yields the start and end of node attempts (NodeStarted,
	// NodeFinished, NodeRetry, NodeCached) and of durable Task calls.
	StreamTasks
	// StreamCheckpoints yields CheckpointSaved.
	StreamCheckpoints
	// StreamDebug yields every event.
	StreamDebug
	// StreamSubgraphs adds the events of subgraphs, in the other modes
	// chosen, with Event.Namespace set.
	StreamSubgraphs
)

func (m StreamMode) String() string {
	switch m {
	case StreamValues:
		return "values"
	case StreamUpdates:
		return "updates"
	case StreamCustom:
		return "custom"
	case StreamTasks:
		return "tasks"
	case StreamCheckpoints:
		return "checkpoints"
	case StreamDebug:
		return "debug"
	case StreamSubgraphs:
		return "subgraphs"
	}
	return fmt.Sprintf("StreamMode(%d)", int(m))
}

// streamFilter is the pure decision of which events a stream yields.
type streamFilter struct {
	kinds     map[EventKind]bool
	all       bool
	subgraphs bool
}

func newStreamFilter(modes []StreamMode) streamFilter {
	f := streamFilter{kinds: map[EventKind]bool{RunStarted: true, RunInterrupted: true, RunFinished: true}}
	if len(modes) == 0 || (len(modes) == 1 && modes[0] == StreamSubgraphs) {
		modes = append(modes, StreamValues)
	}
	for _, m := range modes {
		switch m {
		case StreamValues:
			f.kinds[StepValues] = true
		case StreamUpdates:
			f.kinds[NodeUpdate] = true
		case StreamCustom:
			f.kinds[Custom] = true
		case StreamTasks:
			for _, k := range []EventKind{NodeStarted, NodeFinished, NodeRetry, NodeCached, TaskStarted, TaskSaved, TaskReplayed, TaskFailed} {
				f.kinds[k] = true
			}
		case StreamCheckpoints:
			f.kinds[CheckpointSaved] = true
		case StreamDebug:
			f.all = true
		case StreamSubgraphs:
			f.subgraphs = true
		}
	}
	return f
}

func (f streamFilter) wants(e Event) bool {
	if e.Namespace != "" && !f.subgraphs {
		return false
	}
	return f.all || f.kinds[e.Kind]
}

// Stream starts the run runID from initial, as Run does, and yields its
// events as they happen, filtered by modes (StreamValues when none is
// given). A run that fails yields its error last, with a zero Event.
// StateOf reads the state a StepValues or NodeUpdate event carries.
//
// Updates (StreamUpdates) come as each branch finishes, as LangGraph
// streams them. In a step that runs several branches (a fan-out, or
// sends), each branch's NodeUpdate is yielded as soon as the branch has
// finished and its result is saved as a pending write (buffered, with Exit
// durability; without a store, as soon as it finishes), in the order the
// branches finish, with Pending set and Seq 0: the step is not
// checkpointed yet, but Resume will not run that branch again. Branch
// tells the branches of one node apart (each send is one). Only after
// every branch, the step's checkpoint is written (CheckpointSaved) and its
// state yielded (StepValues). A branch that fails or interrupts yields no
// update; when Resume runs the step again, the branches saved before are
// yielded, Pending, as they are loaded, then the others as they finish. A
// step of one node (or one send) has no pending write: its NodeUpdate
// comes after its checkpoint, Pending false, with Seq set. Each node run
// yields its update once.
//
// The run goes on only as fast as the loop reads: each event waits for the
// reader. Stopping the loop (break, or return) stops the run cleanly: the
// step under way finishes and is checkpointed, no further step starts, and
// the run is left interrupted with a KindStop interrupt, which Resume (or
// ResumeStream) continues without a value. The loop's exit waits for that
// checkpoint.
func (r *Runner[S]) Stream(ctx context.Context, runID string, initial S, modes ...StreamMode) iter.Seq2[Event, error] {
	return r.stream(ctx, modes, func(ctx context.Context, o execOpts) error {
		_, err := r.run(ctx, runID, initial, o)
		return err
	})
}

// StreamOption is an option of ResumeStream: a StreamMode or a
// ResumeOption (WithResume).
type StreamOption interface{ streamOption() }

func (StreamMode) streamOption()   {}
func (ResumeOption) streamOption() {}

// ResumeStream resumes the run runID, as Resume does, and yields its events
// as Stream does. opts are the stream modes and the resume options, in any
// order (a nil option is skipped):
//
//	r.ResumeStream(ctx, "run-1", graph.WithResume(true), graph.StreamUpdates)
func (r *Runner[S]) ResumeStream(ctx context.Context, runID string, opts ...StreamOption) iter.Seq2[Event, error] {
	var rc resumeConfig
	var modes []StreamMode
	for _, o := range opts {
		switch o := o.(type) {
		case StreamMode:
			modes = append(modes, o)
		case ResumeOption:
			if o != nil {
				o(&rc)
			}
		}
	}
	return r.stream(ctx, modes, func(ctx context.Context, o execOpts) error {
		if rc.err != nil {
			return rc.err
		}
		_, err := r.resume(ctx, runID, rc, o)
		return err
	})
}

func (r *Runner[S]) stream(ctx context.Context, modes []StreamMode, drive func(context.Context, execOpts) error) iter.Seq2[Event, error] {
	f := newStreamFilter(modes)
	return func(yield func(Event, error) bool) {
		var stop, stopped atomic.Bool
		events := make(chan Event)
		acks := make(chan struct{}) // the reader is done with an event: the run may go on
		done := make(chan error, 1)
		o := execOpts{stopReq: &stop, up: func(e Event) {
			if stopped.Load() || !f.wants(e) {
				return
			}
			events <- e
			<-acks
		}}
		go func() {
			err := drive(ctx, o)
			close(events) // every send happened inside drive
			done <- err
		}()
		for e := range events {
			if !yield(e, nil) {
				// Ask the run to stop before its next step, then let it go on.
				stopped.Store(true)
				stop.Store(true)
				acks <- struct{}{}
				for range events { // sends under way when the stop was asked
					acks <- struct{}{}
				}
				<-done
				return
			}
			acks <- struct{}{}
		}
		if err := <-done; err != nil {
			yield(Event{}, err)
		}
	}
}
