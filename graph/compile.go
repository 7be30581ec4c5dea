package graph

import (
	"fmt"
	"slices"
	"sort"
)

// Compile checks the whole graph and returns a Runner. It reports every
// problem at once in a *CompileError (matching ErrInvalidGraph): problems
// recorded by the builder (duplicates, reserved or empty names), a missing
// edge from START, edges from or to unknown nodes, undeclared or unknown
// conditional targets, unreachable nodes, nodes with no way to END, static
// fan-outs without WithMerge, unknown interrupt nodes and bad options.
func (g *Graph[S]) Compile(opts ...Option) (*Runner[S], error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	problems := append([]string(nil), g.problems...)
	problems = append(problems, cfg.validate()...)
	r, np := g.newRunner(cfg)
	problems = append(problems, np...)
	problems = append(problems, r.checkEdges()...)
	problems = append(problems, r.useCodec()...)
	problems = append(problems, r.useMerge()...)
	problems = append(problems, r.usePlan(g.reducers)...)
	problems = append(problems, r.useSummary()...)
	problems = append(problems, r.checkFanOuts()...)
	problems = append(problems, r.markInterrupts()...)
	if len(problems) > 0 {
		return nil, &CompileError{Problems: problems}
	}
	return r, nil
}

// newRunner copies g's nodes and edges into a Runner configured with cfg,
// binding each subgraph node to cfg, and returns it with the nodes' own
// problems.
func (g *Graph[S]) newRunner(cfg config) (*Runner[S], []string) {
	r := &Runner[S]{
		nodes:  make(map[string]*node[S], len(g.nodes)),
		order:  slices.Clone(g.order),
		edges:  map[string][]string{},
		conds:  map[string]*condEdge[S]{},
		cfg:    cfg,
		before: map[string]bool{},
		after:  map[string]bool{},
	}
	var problems []string
	for _, name := range g.order {
		n := *g.nodes[name]
		problems = append(problems, n.problems()...)
		if n.sub != nil {
			var run any
			run, n.bound = n.sub.bind(cfg)
			n.run = run.(nodeRun[S])
		}
		r.nodes[name] = &n
		r.hasDeferred = r.hasDeferred || n.deferred
		r.hasPartial = r.hasPartial || n.partial
		if n.cache != nil && r.cache == nil {
			r.cache = &nodeCache{}
		}
	}
	for k, v := range g.edges {
		r.edges[k] = slices.Clone(v)
	}
	for k, v := range g.conds {
		r.conds[k] = v
	}
	return r, problems
}

// useCodec sets the codec of WithCodec, or JSON without one, and reports a
// codec of another state type.
func (r *Runner[S]) useCodec() []string {
	switch c := r.cfg.codec.(type) {
	case nil:
		r.codec = NewJSONCodec[S]()
	case Codec[S]:
		r.codec = c
	default:
		return []string{fmt.Sprintf("codec %T does not encode the state type %T", c, *new(S))}
	}
	return nil
}

// useMerge sets the merge function of WithMerge or WithMergeBranches, and
// reports one of another state type, or both options given.
func (r *Runner[S]) useMerge() []string {
	var p []string
	switch m := r.cfg.merge.(type) {
	case nil:
	case MergeFunc[S]:
		r.merge = m
	default:
		p = append(p, fmt.Sprintf("merge function %T does not take the state type %T", m, *new(S)))
	}
	switch m := r.cfg.mergeB.(type) {
	case nil:
	case BranchMergeFunc[S]:
		r.mergeB = m
		if r.merge != nil {
			p = append(p, "both WithMerge and WithMergeBranches: a runner has one merge function")
		}
	default:
		p = append(p, fmt.Sprintf("merge function %T does not take the state type %T", m, *new(S)))
	}
	return p
}

// usePlan sets the field plan of the state's reducers, and reports a bad
// reducer or a Partial node on a state that is no struct.
func (r *Runner[S]) usePlan(reducers []FieldReducer[S]) []string {
	plan, p := newFieldPlan(reducers)
	r.plan = plan
	for _, name := range r.order {
		if n := r.nodes[name]; n.partial && plan == nil {
			p = append(p, fmt.Sprintf("node %q: Partial needs a struct state, not %T", name, *new(S)))
		}
	}
	return p
}

// useSummary sets the summary function of WithSummary, and reports one of
// another state type.
func (r *Runner[S]) useSummary() []string {
	switch f := r.cfg.summary.(type) {
	case nil:
	case SummaryFunc[S]:
		r.summary = f
	default:
		return []string{fmt.Sprintf("summary function %T does not take the state type %T", f, *new(S))}
	}
	return nil
}

// checkFanOuts reports the nodes that fan out (several edges, or an edge
// beside a conditional one) or send, when r cannot merge branches.
func (r *Runner[S]) checkFanOuts() []string {
	if r.merges() {
		return nil
	}
	var p []string
	for _, from := range sortedKeys(r.edges) {
		if n := len(r.edges[from]); n > 1 || (n == 1 && r.conds[from] != nil) {
			p = append(p, fmt.Sprintf("node %q fans out without a merge function (WithMerge, or reducers on the state's fields)", from))
		}
	}
	for _, from := range sortedKeys(r.conds) {
		if r.conds[from].sends {
			p = append(p, fmt.Sprintf("node %q sends without a merge function (WithMerge, or reducers on the state's fields)", from))
		}
	}
	return p
}

// markInterrupts records the nodes of WithInterruptBefore and
// WithInterruptAfter, and reports the names that are no node.
func (r *Runner[S]) markInterrupts() []string {
	var p []string
	for _, spec := range []struct {
		kind  string
		names []string
		set   map[string]bool
	}{{"before", r.cfg.before, r.before}, {"after", r.cfg.after, r.after}} {
		for _, n := range spec.names {
			if !r.isNode(n) {
				p = append(p, fmt.Sprintf("interrupt %s unknown node %q", spec.kind, n))
			}
			spec.set[n] = true
		}
	}
	return p
}

// merges reports whether r can combine the branches of a fan-out step: with
// a merge function, or through the state's reducers.
func (r *Runner[S]) merges() bool {
	return r.merge != nil || r.mergeB != nil || (r.plan != nil && r.plan.reducing)
}

// isNode reports whether name is one of r's nodes.
func (r *Runner[S]) isNode(name string) bool {
	_, ok := r.nodes[name]
	return ok
}

// checkEdges checks every edge and declared target, reachability from START
// and a path to END from every node.
func (r *Runner[S]) checkEdges() []string {
	var p []string
	if len(r.edges[START]) == 0 && r.conds[START] == nil {
		p = append(p, "no edge from START")
	}
	succ, ep := r.successors()
	p = append(p, ep...)
	return append(p, r.checkPaths(succ)...)
}

// successors returns the nodes that may follow each node (and START):
// through its edges, its Command targets (END for a Command to the parent)
// and its conditional edges. It reports those from or to unknown nodes and
// those to START.
func (r *Runner[S]) successors() (map[string][]string, []string) {
	succ := map[string][]string{}
	var p []string
	for _, from := range sortedKeys(r.edges) {
		if from != START && !r.isNode(from) {
			p = append(p, fmt.Sprintf("edge from unknown node %q", from))
		}
		p = append(p, r.follow(succ, "edge", from, r.edges[from])...)
	}
	for _, name := range sortedKeys(r.nodes) {
		n := r.nodes[name]
		p = append(p, r.follow(succ, "command", name, n.gotos)...)
		if len(n.parentTargets) > 0 {
			// Going to the parent ends this graph.
			succ[name] = append(succ[name], END)
		}
	}
	for _, from := range sortedKeys(r.conds) {
		if from != START && !r.isNode(from) {
			p = append(p, fmt.Sprintf("conditional edge from unknown node %q", from))
		}
		p = append(p, r.follow(succ, "conditional edge", from, r.conds[from].targets)...)
	}
	return succ, p
}

// follow adds tos to the successors of from, and reports the targets of
// those edges of the given kind that are START or unknown nodes.
func (r *Runner[S]) follow(succ map[string][]string, kind, from string, tos []string) []string {
	var p []string
	for _, to := range tos {
		switch {
		case to == START:
			p = append(p, fmt.Sprintf("%s %s -> START: START cannot be a target", kind, from))
		case to != END && !r.isNode(to):
			p = append(p, fmt.Sprintf("%s %s -> unknown node %q", kind, from, to))
		}
		succ[from] = append(succ[from], to)
	}
	return p
}

// checkPaths reports the nodes START does not reach through succ, and those
// with no outgoing edge or no path to END.
func (r *Runner[S]) checkPaths(succ map[string][]string) []string {
	seen := reach(START, succ)
	ends := reach(END, predecessors(succ))
	var p []string
	for _, n := range sortedKeys(r.nodes) {
		if !seen[n] {
			p = append(p, fmt.Sprintf("node %q is unreachable from START", n))
		}
		switch {
		case len(succ[n]) == 0:
			p = append(p, fmt.Sprintf("node %q is a dead end: it has no outgoing edge", n))
		case !ends[n]:
			p = append(p, fmt.Sprintf("node %q is a dead end: no path from it reaches END", n))
		}
	}
	return p
}

// reach returns the names reachable from from through next, from included.
func reach(from string, next map[string][]string) map[string]bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range next[n] {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	return seen
}

// predecessors inverts succ: the names each name follows.
func predecessors(succ map[string][]string) map[string][]string {
	pred := map[string][]string{}
	for from, tos := range succ {
		for _, to := range tos {
			pred[to] = append(pred[to], from)
		}
	}
	return pred
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
