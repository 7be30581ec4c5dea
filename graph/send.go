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
// whose input has the same key as an earlier call within TTL is not run; its
// earlier result is used instead. Key derives the key from the node's input
// (the state, or a send's input); nil means the input's encoding. A zero
// TTL means results never expire. The cache lives in the Runner's memory:
// it is shared by the runner's runs and lost when the process exits.
type CachePolicy struct {
	Key func(input any) string
	TTL time.Duration
}

// Cache sets the node's cache policy (see CachePolicy). A command node or a
// subgraph cannot be cached.
func Cache(p CachePolicy) NodeOption { return func(n *nodeSpec) { n.cache = &p } }

// AddSendEdge routes from a node with a SendRouter. targets lists every node
// the router may name, in Nodes or in a send (END included). A graph with a
// send edge needs WithMerge.
func (g *Graph[S]) AddSendEdge(from string, r SendRouter[S], targets ...string) *Graph[S] {
	if r == nil {
		g.problem("send edge from %q has a nil router", from)
		return g
	}
	if _, dup := g.conds[from]; dup {
		g.problem("node %q has two conditional edges", from)
		return g
	}
	if len(targets) == 0 {
		g.problem("send edge from %q declares no targets", from)
	}
	g.conds[from] = &condEdge[S]{send: r, targets: append([]string(nil), targets...)}
	return g
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
	return p
}
