package graph

import (
	"context"
	"fmt"
	"time"
)

// Send is one branch a SendRouter or a Command starts: Node runs on Input
// instead of on the step's state, as LangGraph's Send. Several sends may name
// the same node; each is its own branch, saved as a pending write when it
// finishes and merged with the graph's MergeFunc (a send's Input is not the
// merge's base: the merge sees the state before the step and each branch's
// result, in branch order).
type Send[S any] struct {
	Node  string
	Input S
}

// Routes is what a SendRouter chooses: named nodes, which run on the state
// the step produced, and sends, which run on their own inputs. Named nodes
// come first in the next step, then the sends, in order.
type Routes[S any] struct {
	Nodes []string
	Sends []Send[S]
}

// SendRouter is a router that may start sends (map-reduce). Like a Router it
// runs again on resume, so it must be a pure function of the state. Every
// node it names, in Nodes or in a send, must be declared in AddSendEdge.
type SendRouter[S any] func(ctx context.Context, s S) (Routes[S], error)

// RouteFunc is the router of AddRoute, as LangGraph's one kind of router:
// it returns the nodes to run next (END finishes the run), sends, or both
// (see Routes, Goto and SendEach). It runs again on resume, so it must be a
// pure function of the state. Router and SendRouter are its older forms.
type RouteFunc[S any] func(ctx context.Context, s S) (Routes[S], error)

// AddRoute routes from a node with a RouteFunc, as LangGraph's
// add_conditional_edges: the router may return node names and sends.
// targets lists every node it may name (END included), so that Compile can
// check the graph; an undeclared choice fails the step. A step that runs
// several branches needs WithMerge or reducers (see Reduce and Partial).
// AddConditionalEdge and AddSendEdge are AddRoute for their router types.
func (g *Graph[S]) AddRoute(from string, route RouteFunc[S], targets ...string) *Graph[S] {
	if route == nil {
		g.problem("route from %q has a nil router", from)
		return g
	}
	return g.addCond("route", from, route, false, targets)
}

// Goto returns Routes to the nodes named, for a RouteFunc:
//
//	return graph.Goto[State]("review"), nil
func Goto[S any](nodes ...string) Routes[S] { return Routes[S]{Nodes: nodes} }

// SendEach returns Routes with one send to node per item, its input made by
// input, for a RouteFunc that maps over a list (LangGraph's
// [new Send(node, {x}) for x in xs]):
//
//	return graph.SendEach("write", s.Topics, func(t string) State { return State{Topic: t} }), nil
func SendEach[S, T any](node string, items []T, input func(T) S) Routes[S] {
	r := Routes[S]{Sends: make([]Send[S], len(items))}
	for i, it := range items {
		r.Sends[i] = Send[S]{Node: node, Input: input(it)}
	}
	return r
}

// Command is what a command node returns: its update (the node's result)
// together with where the run goes next, as LangGraph's Command.
//
//   - Goto lists nodes of this graph due next, beside the node's static
//     edges; END ends the run when nothing else is due. Every name must be
//     declared in AddCommandNode.
//   - Sends start branches on their own inputs (see Send).
//   - Parent, inside a subgraph, ends the subgraph: its state after Update
//     is handed to the parent graph through the subgraph's out function,
//     and the parent runs Goto next. The names must be declared with
//     ParentTargets and are nodes of the parent. At the top level a
//     Command with Parent fails the step.
type Command[S any] struct {
	Update S
	Goto   []string
	Sends  []Send[S]
	Parent bool
}

// CommandFunc is a node that returns a Command.
type CommandFunc[S any] func(ctx context.Context, s S) (Command[S], error)

// ParentTargets declares the parent-graph nodes a command node of a subgraph
// may go to with Command.Parent; the parent's Compile checks they exist.
func ParentTargets(nodes ...string) NodeOption {
	return func(n *nodeSpec) { n.parentTargets = append(n.parentTargets, nodes...) }
}

// Defer makes a node deferred, as LangGraph's defer=True: when it becomes
// due while other branches are still pending, it waits, and runs once, in
// the first step in which nothing but deferred nodes is due.
func Defer() NodeOption { return func(n *nodeSpec) { n.deferred = true } }

// CachePolicy caches a node's results, as LangGraph's CachePolicy: a node
// whose input has the same key as an earlier call within TTL is not run;
// the write it made then is applied to this call's input instead. Key
// derives the key from the node's input (the state, or a send's input); nil
// means the input's encoding. A zero TTL means results never expire. The
// cache lives in the Runner's memory: it is shared by the runner's runs and
// lost when the process exits (see also CacheKey, the typed form).
//
// What is cached is the node's write, not the state it returned, so a hit
// never hands one run another run's state. A Partial node's write is its
// update. A node that returns the whole state wrote what it changed: the
// elements it appended to a graph:"append" field, what it added to a
// graph:"sum" field, and the new value of every other field it changed; a
// hit appends, adds and sets the same on this call's input, and the fields
// the node did not change keep this run's values. A hit therefore gives the
// state that running the node would give whenever the node's write depends
// only on what the key covers, which is what a key promises; the one
// exception is a whole-state node that set a field to the value it already
// had in the call that filled the cache: that write cannot be seen, so a
// hit leaves the field as this run has it. A Partial node says what it
// writes, and has no such exception.
type CachePolicy struct {
	Key func(input any) string
	TTL time.Duration
}

// Cache sets the node's cache policy (see CachePolicy). A command node or a
// subgraph cannot be cached.
func Cache(p CachePolicy) NodeOption { return func(n *nodeSpec) { n.cache = &p } }

// CacheKey caches the node's results as Cache does, with a key function
// typed by the state: key(input) says which inputs count as the same call,
// and a result lives for ttl (0: for ever). Compile checks that S is the
// graph's state type.
//
//	graph.CacheKey(func(s State) string { return s.Query }, time.Hour)
func CacheKey[S any](key func(S) string, ttl time.Duration) NodeOption {
	return func(n *nodeSpec) {
		n.cache, n.cacheKey = &CachePolicy{TTL: ttl}, key
		if key == nil {
			n.cacheKey = nil // the input's encoding, as CachePolicy's nil Key
		}
	}
}

// AddSendEdge routes from a node with a SendRouter. targets lists every node
// the router may name, in Nodes or in a send (END included). A graph with a
// send edge needs WithMerge or reducers (see Reduce and Partial).
//
// When a send branch fails, the other branches of the step are not
// cancelled (LangGraph cancels them): they run to their end, and each one
// that finishes is saved as a pending write. The step then fails with the
// error of the first failing branch in branch order, and no checkpoint
// records it. Resume runs that step again with only the branches that have
// no pending write: the failed ones (and any that never finished), so
// finished work is never lost or repeated. A branch that needs to stop its
// siblings must say so in the state of a later step, or return an error
// the caller acts on.
func (g *Graph[S]) AddSendEdge(from string, r SendRouter[S], targets ...string) *Graph[S] {
	if r == nil {
		g.problem("send edge from %q has a nil router", from)
		return g
	}
	return g.addCond("send edge", from, RouteFunc[S](r), true, targets)
}

// AddCommandNode adds a node that returns a Command. targets lists every node
// of this graph its Goto and Sends may name (END included); Compile checks
// them and counts them as the node's edges. The node may also have static
// edges, followed as for any node.
func (g *Graph[S]) AddCommandNode(name string, fn CommandFunc[S], targets []string, opts ...NodeOption) *Graph[S] {
	var run nodeRun[S]
	if fn != nil {
		run = func(ctx context.Context, s S) (S, *Command[S], error) {
			c, err := fn(ctx, s)
			if err != nil {
				return c.Update, nil, err
			}
			return c.Update, &c, nil
		}
	}
	g.addNode(name, run, opts, func(n *node[S]) {
		n.gotos = append([]string(nil), targets...)
		n.command = true
	})
	return g
}

// problemsOfNode reports what is wrong with a node's options.
func (n *node[S]) problems() []string {
	var p []string
	if n.cache != nil && (n.command || n.sub != nil) {
		p = append(p, fmt.Sprintf("node %q: a command node or a subgraph cannot be cached", n.name))
	}
	if n.cache != nil && n.cache.TTL < 0 {
		p = append(p, fmt.Sprintf("node %q: negative cache TTL %v", n.name, n.cache.TTL))
	}
	if _, ok := n.cacheKey.(func(S) string); n.cacheKey != nil && !ok {
		p = append(p, fmt.Sprintf("node %q: CacheKey's key function %T does not take the state type %T", n.name, n.cacheKey, *new(S)))
	}
	if n.partial && n.sub != nil {
		p = append(p, fmt.Sprintf("node %q: a subgraph cannot be Partial: it returns the child's whole state", n.name))
	}
	return p
}
