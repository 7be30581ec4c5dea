package graph

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// START and END are the reserved names of the graph's entry and exit. Edges
// from START choose the first nodes; an edge to END finishes the run.
const (
	START = "__start__"
	END   = "__end__"
)

// NodeFunc is a node: it receives the current state and returns the next one.
// It must not mutate its input (see graphtest.CheckPure) and must follow the
// rules in the package documentation.
type NodeFunc[S any] func(ctx context.Context, s S) (S, error)

// Func makes fn, a function of the state that needs no context and
// cannot fail, into the form AddNode, AddCommandNode and AddRoute take: the
// function returns fn(s) and a nil error. It is LangGraph's node
// (s) => update, and its router (s) => names or sends:
//
//	func publish(s Doc) Doc { return Doc{Route: s.Route + " -> publish"} }
//	g.AddNode("publish", graph.Func(publish), graph.Partial())
//
// fn returning S is a NodeFunc[S] (with Partial, fn returns its update),
// returning Command[S] a CommandFunc[S], returning Routes[S] a
// RouteFunc[S]. A function that does I/O, waits or may fail takes the
// run's ctx and returns an error, and needs no Func. Func(nil) is nil,
// which AddNode and the others report.
func Func[S, O any](fn func(s S) O) func(ctx context.Context, s S) (O, error) {
	if fn == nil {
		return nil
	}
	return func(_ context.Context, s S) (O, error) { return fn(s), nil }
}

// Router chooses the nodes that run after a node, from the state the step
// produced. One target continues the run; several targets fan out; END
// finishes it (END next to other targets is ignored). Every target must be
// declared in AddConditionalEdge; an empty choice fails the step. A router
// runs again on resume, so it must be a pure function of the state.
type Router[S any] func(ctx context.Context, s S) ([]string, error)

// RetryPolicy says how often a failing node is tried again.
type RetryPolicy struct {
	MaxAttempts int           // total attempts, including the first; < 1 means 1
	Backoff     time.Duration // wait before the second attempt; doubled each time
	MaxBackoff  time.Duration // cap on the wait; 0 means no cap
	// Retryable reports whether an error is worth another attempt. Nil means
	// every error except interrupts and the run's own cancellation.
	Retryable func(error) bool
}

// NodeOption configures one node.
type NodeOption func(*nodeSpec)

// Retry sets the node's retry policy.
func Retry(p RetryPolicy) NodeOption { return func(n *nodeSpec) { n.retry = p } }

// Timeout bounds each attempt of the node: its ctx has this deadline, and
// when the deadline passes the attempt ends with an error wrapping
// ErrNodeTimeout (retried as the node's RetryPolicy says), whether or not the
// node has returned. A result the node returns after its deadline is dropped:
// it is never merged, saved as a pending write or checkpointed. The node's
// goroutine cannot be stopped from outside; it runs on in the background
// until the node returns, possibly alongside the next attempt, so a node must
// honour ctx to stop its work (as a Temporal activity must heed its
// heartbeat and timeouts).
func Timeout(d time.Duration) NodeOption { return func(n *nodeSpec) { n.timeout = d } }

type nodeSpec struct {
	retry         RetryPolicy
	timeout       time.Duration
	deferred      bool
	partial       bool // the node returns a partial update (Partial)
	cache         *CachePolicy
	cacheKey      any // a CacheKey's func(S) string, checked at Compile
	parentTargets []string
}

// Partial makes a node return a partial update, as a LangGraph node returns
// {"log": ["x"]}: only the fields of its result that are not their zero
// value are written, each through its reducer (a graph tag or Graph.Reduce;
// a field without one is set). So a node no longer copies the state:
//
//	func(_ context.Context, s St) (St, error) { return St{Log: []string{"x"}}, nil }
//
// with Log tagged graph:"append", adds "x" to the log and leaves the other
// fields alone. A field cannot be set to its zero value by a partial
// update; a node that must do so returns the whole state (no Partial).
// The state must be a struct; a subgraph node cannot be partial. A command
// node with Partial returns its partial update in Command.Update.
func Partial() NodeOption { return func(n *nodeSpec) { n.partial = true } }

// nodeRun is a node as the runtime calls it: plain nodes return no Command.
type nodeRun[S any] func(ctx context.Context, s S) (S, *Command[S], error)

type node[S any] struct {
	name    string
	run     nodeRun[S]
	gotos   []string // the targets a command node declared
	command bool     // the node returns a Command
	sub     subgraph // set for a subgraph node
	bound   any      // the subgraph's *Runner, bound at Compile
	nodeSpec
}

type condEdge[S any] struct {
	route   RouteFunc[S]
	sends   bool // added by AddSendEdge: it may send (drawn "send"; needs a merge)
	targets []string
}

// Graph is a builder for a state graph. Its methods record the graph and
// return the graph for chaining; problems are reported, all at once, by
// Compile. A Graph is not safe for concurrent use; the Runner it compiles to is.
type Graph[S any] struct {
	nodes    map[string]*node[S]
	order    []string // node names in the order they were added
	edges    map[string][]string
	conds    map[string]*condEdge[S]
	reducers []FieldReducer[S]
	problems []string
}

// New returns an empty graph over state type S.
func New[S any]() *Graph[S] {
	return &Graph[S]{
		nodes: map[string]*node[S]{},
		edges: map[string][]string{},
		conds: map[string]*condEdge[S]{},
	}
}

func (g *Graph[S]) problem(format string, args ...any) {
	g.problems = append(g.problems, fmt.Sprintf(format, args...))
}

// AddNode adds a node named name.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	var run nodeRun[S]
	if fn != nil {
		run = func(ctx context.Context, s S) (S, *Command[S], error) {
			out, err := fn(ctx, s)
			return out, nil, err
		}
	}
	g.addNode(name, run, opts, nil)
	return g
}

// addNode records a node; set, when not nil, fills in what its kind adds.
func (g *Graph[S]) addNode(name string, run nodeRun[S], opts []NodeOption, set func(*node[S])) {
	switch {
	case name == "":
		g.problem("node with an empty name")
		return
	case name == START || name == END:
		g.problem("node %q uses a reserved name", name)
		return
	case strings.Contains(name, NamespaceSep):
		g.problem("node %q contains %q, which separates subgraph namespaces", name, NamespaceSep)
		return
	}
	if _, dup := g.nodes[name]; dup {
		g.problem("node %q added twice", name)
		if run == nil {
			g.problem("node %q has a nil function", name)
		}
		return
	}
	if run == nil {
		// Kept as a node, so that a second AddNode of the name is reported
		// as a duplicate and edges to it are not reported as unknown.
		g.problem("node %q has a nil function", name)
	}
	n := &node[S]{name: name, run: run}
	for _, o := range opts {
		o(&n.nodeSpec)
	}
	if set != nil {
		set(n)
	}
	g.nodes[name] = n
	g.order = append(g.order, name)
}

// AddEdge adds an edge: after from runs, to is due. Several edges from one
// node fan out, which needs WithMerge.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	for _, t := range g.edges[from] {
		if t == to {
			g.problem("edge %s -> %s added twice", from, to)
			return g
		}
	}
	g.edges[from] = append(g.edges[from], to)
	return g
}

// AddConditionalEdge routes from a node with a router. targets lists every
// node the router may return (END included), so that Compile can check the
// graph; a router returning an undeclared target fails the step. It is
// AddRoute for a router that returns node names only.
func (g *Graph[S]) AddConditionalEdge(from string, r Router[S], targets ...string) *Graph[S] {
	if r == nil {
		g.problem("conditional edge from %q has a nil router", from)
		return g
	}
	route := func(ctx context.Context, s S) (Routes[S], error) {
		nodes, err := r(ctx, s)
		return Routes[S]{Nodes: nodes}, err
	}
	return g.addCond("conditional edge", from, route, false, targets)
}

// addCond records a conditional edge of any kind.
func (g *Graph[S]) addCond(what, from string, route RouteFunc[S], sends bool, targets []string) *Graph[S] {
	if _, dup := g.conds[from]; dup {
		g.problem("node %q has two conditional edges", from)
		return g
	}
	if len(targets) == 0 {
		g.problem("%s from %q declares no targets", what, from)
	}
	g.conds[from] = &condEdge[S]{route: route, sends: sends, targets: append([]string(nil), targets...)}
	return g
}
