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

	r := &Runner[S]{
		nodes:  make(map[string]*node[S], len(g.nodes)),
		order:  slices.Clone(g.order),
		edges:  map[string][]string{},
		conds:  map[string]*condEdge[S]{},
		cfg:    cfg,
		before: map[string]bool{},
		after:  map[string]bool{},
	}
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
	problems = append(problems, r.checkEdges()...)

	switch c := cfg.codec.(type) {
	case nil:
		r.codec = NewJSONCodec[S]()
	case Codec[S]:
		r.codec = c
	default:
		problems = append(problems, fmt.Sprintf("codec %T does not encode the state type %T", c, *new(S)))
	}
	switch m := cfg.merge.(type) {
	case nil:
	case MergeFunc[S]:
		r.merge = m
	default:
		problems = append(problems, fmt.Sprintf("merge function %T does not take the state type %T", m, *new(S)))
	}
	switch m := cfg.mergeB.(type) {
	case nil:
	case BranchMergeFunc[S]:
		r.mergeB = m
		if r.merge != nil {
			problems = append(problems, "both WithMerge and WithMergeBranches: a runner has one merge function")
		}
	default:
		problems = append(problems, fmt.Sprintf("merge function %T does not take the state type %T", m, *new(S)))
	}
	plan, pp := newFieldPlan(g.reducers)
	r.plan = plan
	problems = append(problems, pp...)
	for _, name := range g.order {
		if n := r.nodes[name]; n.partial && plan == nil {
			problems = append(problems, fmt.Sprintf("node %q: Partial needs a struct state, not %T", name, *new(S)))
		}
	}
	switch f := cfg.summary.(type) {
	case nil:
	case SummaryFunc[S]:
		r.summary = f
	default:
		problems = append(problems, fmt.Sprintf("summary function %T does not take the state type %T", f, *new(S)))
	}
	if !r.merges() {
		for _, from := range sortedKeys(r.edges) {
			if n := len(r.edges[from]); n > 1 || (n == 1 && r.conds[from] != nil) {
				problems = append(problems, fmt.Sprintf("node %q fans out without a merge function (WithMerge, or reducers on the state's fields)", from))
			}
		}
		for _, from := range sortedKeys(r.conds) {
			if r.conds[from].sends {
				problems = append(problems, fmt.Sprintf("node %q sends without a merge function (WithMerge, or reducers on the state's fields)", from))
			}
		}
	}
	for _, spec := range []struct {
		kind  string
		names []string
		set   map[string]bool
	}{{"before", cfg.before, r.before}, {"after", cfg.after, r.after}} {
		for _, n := range spec.names {
			if _, ok := g.nodes[n]; !ok {
				problems = append(problems, fmt.Sprintf("interrupt %s unknown node %q", spec.kind, n))
			}
			spec.set[n] = true
		}
	}
	if len(problems) > 0 {
		return nil, &CompileError{Problems: problems}
	}
	return r, nil
}

// merges reports whether r can combine the branches of a fan-out step: with
// a merge function, or through the state's reducers.
func (r *Runner[S]) merges() bool {
	return r.merge != nil || r.mergeB != nil || (r.plan != nil && r.plan.reducing)
}

// checkEdges checks every edge and declared target, reachability from START
// and a path to END from every node.
func (r *Runner[S]) checkEdges() []string {
	var p []string
	isNode := func(n string) bool { _, ok := r.nodes[n]; return ok }
	if len(r.edges[START]) == 0 && r.conds[START] == nil {
		p = append(p, "no edge from START")
	}
	succ := map[string][]string{}
	for _, from := range sortedKeys(r.edges) {
		if from != START && !isNode(from) {
			p = append(p, fmt.Sprintf("edge from unknown node %q", from))
		}
		for _, to := range r.edges[from] {
			switch {
			case to == START:
				p = append(p, fmt.Sprintf("edge %s -> START: START cannot be a target", from))
			case to != END && !isNode(to):
				p = append(p, fmt.Sprintf("edge %s -> unknown node %q", from, to))
			}
			succ[from] = append(succ[from], to)
		}
	}
	for _, name := range sortedKeys(r.nodes) {
		n := r.nodes[name]
		for _, to := range n.gotos {
			switch {
			case to == START:
				p = append(p, fmt.Sprintf("command %s -> START: START cannot be a target", name))
			case to != END && !isNode(to):
				p = append(p, fmt.Sprintf("command %s -> unknown node %q", name, to))
			}
			succ[name] = append(succ[name], to)
		}
		if len(n.parentTargets) > 0 {
			// Going to the parent ends this graph.
			succ[name] = append(succ[name], END)
		}
	}
	for _, from := range sortedKeys(r.conds) {
		if from != START && !isNode(from) {
			p = append(p, fmt.Sprintf("conditional edge from unknown node %q", from))
		}
		for _, to := range r.conds[from].targets {
			switch {
			case to == START:
				p = append(p, fmt.Sprintf("conditional edge %s -> START: START cannot be a target", from))
			case to != END && !isNode(to):
				p = append(p, fmt.Sprintf("conditional edge %s -> unknown node %q", from, to))
			}
			succ[from] = append(succ[from], to)
		}
	}
	// Reachable from START.
	seen := map[string]bool{START: true}
	queue := []string{START}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range succ[n] {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	// Can reach END.
	pred := map[string][]string{}
	for from, tos := range succ {
		for _, to := range tos {
			pred[to] = append(pred[to], from)
		}
	}
	ends := map[string]bool{END: true}
	queue = []string{END}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range pred[n] {
			if !ends[m] {
				ends[m] = true
				queue = append(queue, m)
			}
		}
	}
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
