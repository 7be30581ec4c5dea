package graph

import (
	"context"
	"iter"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// This file holds the shortcuts for what every small program does: build a
// static graph, compile it, run it with a store in memory, answer its
// interrupts and read its updates typed. Each is a few lines over the
// methods it stands for, and costs nothing on the step path.

// MustCompile is Compile for a graph fixed in the program's source, as
// regexp.MustCompile is for a fixed pattern: it returns the Runner, and
// panics with the *CompileError when the graph does not compile. A graph
// built from input (a file, a flag) uses Compile and reports the error.
func (g *Graph[S]) MustCompile(opts ...Option) *Runner[S] {
	r, err := g.Compile(opts...)
	if err != nil {
		panic(err)
	}
	return r
}

// AddPath adds an edge between each pair of consecutive nodes, in order:
// AddPath(START, "a", "b", END) is AddEdge(START, "a"), AddEdge("a", "b"),
// AddEdge("b", END), as LangGraph's addSequence wires nodes in a row. A
// path of fewer than two nodes is a Compile problem.
func (g *Graph[S]) AddPath(nodes ...string) *Graph[S] {
	if len(nodes) < 2 {
		g.problem("path %q has fewer than two nodes", nodes)
		return g
	}
	for i := 1; i < len(nodes); i++ {
		g.AddEdge(nodes[i-1], nodes[i])
	}
	return g
}

// Entrypoint returns a graph of one node, name, between START and END: the
// form of LangGraph's functional API (entrypoint), whose node calls Task
// for its durable steps and Ask for its questions. opts are the node's.
func Entrypoint[S any](name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	return New[S]().AddNode(name, fn, opts...).AddPath(START, name, END)
}

// WithMemoryStore persists the runner's runs in a new in-memory store
// (checkpoint.NewMemory), LangGraph's MemorySaver: Resume, interrupts and
// the history methods work for as long as the Runner lives.
func WithMemoryStore() Option { return WithStore(checkpoint.NewMemory()) }

// Update is one node's result in a step, as Updates yields it: the node,
// its branch in the step, and what it wrote (for a Partial node, its
// update; otherwise its output state before the merge). Pending means the
// step is not checkpointed yet (see Stream).
type Update[S any] struct {
	Node    string
	Branch  int
	Pending bool
	State   S
}

// Updates starts the run runID from initial, as Stream with StreamUpdates
// does, and yields each node's update of this run typed, in the order
// Stream yields them (the events of subgraphs and the run's start and end
// are left out). A run that fails yields its error last, with a zero
// Update; stopping the loop stops the run as it does Stream's.
//
//	for u, err := range r.Updates(ctx, "run-1", State{}) { ... }
func (r *Runner[S]) Updates(ctx context.Context, runID string, initial S) iter.Seq2[Update[S], error] {
	return func(yield func(Update[S], error) bool) {
		for ev, err := range r.Stream(ctx, runID, initial, StreamUpdates) {
			if err != nil {
				yield(Update[S]{}, err)
				return
			}
			s, ok := StateOf[S](ev)
			if !ok || ev.Kind != NodeUpdate || ev.Namespace != "" {
				continue
			}
			if !yield(Update[S]{Node: ev.Node, Branch: ev.Branch, Pending: ev.Pending, State: s}, nil) {
				return
			}
		}
	}
}

// RunAnswering runs runID from initial, as Run does, and each time the run
// stops on an interrupt it calls answer with it and resumes the run with
// the value answer returns (WithResume), until the run finishes: the loop
// of a program that asks a person at each interrupt. An error of answer
// stops the loop; it is returned with the run's last result, and the run
// stays interrupted, to be resumed later. The runner needs a store.
func (r *Runner[S]) RunAnswering(ctx context.Context, runID string, initial S, answer func(*PendingInterrupt) (any, error)) (Result[S], error) {
	res, err := r.Run(ctx, runID, initial)
	for err == nil && res.Status == Interrupted {
		v, aerr := answer(res.Interrupt)
		if aerr != nil {
			return res, aerr
		}
		res, err = r.Resume(ctx, runID, WithResume(v))
	}
	return res, err
}
