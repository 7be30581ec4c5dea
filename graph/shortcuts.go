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

// Call is the state of an EntrypointFunc's graph: the function's input, and
// its output once the node has run. A run starts from Call{In: input}; its
// result's State.Out is what the function returned.
type Call[I, O any] struct {
	In  I
	Out O
}

// EntrypointFunc is Entrypoint for a function from an input to an output,
// as LangGraph's entrypoint takes its input and returns its value, so that
// a program of the functional API needs no state type of its own: the
// graph's state is Call[I, O], fn receives In and its result is stored in
// Out (In is kept). fn calls Task for its durable steps and Ask for its
// questions, as an Entrypoint node does; a failed call (an error, or an
// interrupt) writes nothing. I and O must be encodable by the runner's
// codec (JSON by default). opts are the node's; with Partial or without,
// the node writes Out alone, so that a CacheKey over In gives a hit the
// output of an earlier call and keeps this run's In.
//
//	r := graph.EntrypointFunc("order", order).MustCompile(graph.WithMemoryStore())
//	res, err := r.Run(ctx, "order-1", graph.Call[int, string]{In: 42})
func EntrypointFunc[I, O any](name string, fn func(ctx context.Context, in I) (O, error), opts ...NodeOption) *Graph[Call[I, O]] {
	var spec nodeSpec
	for _, o := range opts {
		o(&spec)
	}
	var node NodeFunc[Call[I, O]]
	if fn != nil {
		node = func(ctx context.Context, c Call[I, O]) (Call[I, O], error) {
			out, err := fn(ctx, c.In)
			if err != nil {
				return c, err
			}
			if spec.partial { // the update: Out alone, so that a cache hit keeps this run's In
				return Call[I, O]{Out: out}, nil
			}
			return Call[I, O]{In: c.In, Out: out}, nil
		}
	}
	return Entrypoint(name, node, opts...)
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

// AnswerAll returns an answer for RunAnswering that answers every interrupt
// with v: a program that approves whatever its graph asks (a --yes flag), or
// a demonstration that resumes with a fixed value.
//
//	res, err := r.RunAnswering(ctx, "run-1", State{}, graph.AnswerAll(true))
func AnswerAll(v any) func(*PendingInterrupt) (any, error) {
	return func(*PendingInterrupt) (any, error) { return v, nil }
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
