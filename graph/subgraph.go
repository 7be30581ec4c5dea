package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// NamespaceSep separates a run's id from the namespace of a subgraph run
// (checkpoint.NamespaceSep): a subgraph node's run is
// "<run>|<node>:<step>:<branch>", and so on at every depth. Node names may
// not contain it.
const NamespaceSep = checkpoint.NamespaceSep

// ChildRunID is the run id of the subgraph that node runs in the given step
// and branch of run runID: the child's checkpoints are kept under it, in the
// parent's store.
func ChildRunID(runID, node string, step, branch int) string {
	return checkpoint.ChildRunID(runID, namespaceSegment(node, step, branch))
}

func namespaceSegment(node string, step, branch int) string {
	return node + ":" + strconv.Itoa(step) + ":" + strconv.Itoa(branch)
}

// subgraph is a subgraph node's link to its child graph, whatever the
// child's state type.
type subgraph interface {
	// bind returns the node's function, and the child runner it runs,
	// bound to the parent's store and execution settings.
	bind(parent config) (run any, child any)
	// drawing describes the child graph for Mermaid and DOT.
	drawing() *drawGraph
}

type subgraphOf[P, C any] struct {
	child *Runner[C]
	in    func(P) C
	out   func(P, C) P
}

// AddSubgraph adds node name to g that runs the compiled graph child, as a
// LangGraph subgraph. The child's state type C may differ from the
// parent's: in builds the child's input from the parent's state, and out
// folds the child's final state back into it (the node's result).
//
// The child runs as a run of its own, with id ChildRunID(run, name, step,
// branch), in the parent's store, under the parent's durability, lease owner
// and clock (the child's own WithStore and durability are not used; its
// merge, codec, step limit and interrupts are). Every step of the child is
// checkpointed as any run's, so after a crash at any depth the parent's
// Resume runs the subgraph node again, which resumes the child from its
// latest checkpoint (a finished child is not run again).
//
// An Interrupt inside the child stops the child and the whole run: the
// parent's pending interrupt names the subgraph node and carries the
// child's payload. Resume(WithResume(v)) resumes the child with v. A child
// stopped by WithInterruptBefore/After is reported to the parent the same
// way, and the value given to resume it is not used. A child's command
// node may end the child and send the parent to its nodes (Command.Parent,
// ParentTargets); Compile checks those nodes exist in the parent.
//
// Read the child's checkpoints with Subgraph (its runner, for State and
// History) and Children (its run ids). Events of the child reach the
// parent's subscribers and streams with Event.Namespace set.
func AddSubgraph[P, C any](g *Graph[P], name string, child *Runner[C], in func(P) C, out func(P, C) P, opts ...NodeOption) *Graph[P] {
	if child == nil || in == nil || out == nil {
		g.problem("subgraph %q needs a compiled child graph, an in and an out function", name)
		return g
	}
	sg := &subgraphOf[P, C]{child: child, in: in, out: out}
	placeholder := nodeRun[P](func(context.Context, P) (P, *Command[P], error) {
		panic("graph: subgraph node run before Compile bound it")
	})
	g.addNode(name, placeholder, opts, func(n *node[P]) {
		n.sub = sg
		n.gotos = child.parentTargets()
	})
	return g
}

// AddSubgraph adds node name that runs the compiled graph child, whose
// state type is the graph's own, as LangGraph's add_node(name, subgraph):
// the child starts from the state, and its final state is the node's
// result. It is the package function AddSubgraph without the in and out
// functions; see there for how the child runs, is resumed and is read
// (SubgraphAt).
func (g *Graph[S]) AddSubgraph(name string, child *Runner[S], opts ...NodeOption) *Graph[S] {
	return AddSubgraph(g, name, child, func(s S) S { return s }, func(_, c S) S { return c }, opts...)
}

// parentTargets returns every node of a parent graph r's nodes may go to.
func (r *Runner[S]) parentTargets() []string {
	var out []string
	for _, name := range sortedKeys(r.nodes) {
		for _, t := range r.nodes[name].parentTargets {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

func (s *subgraphOf[P, C]) bind(pc config) (any, any) {
	c := s.child.boundTo(pc)
	run := nodeRun[P](func(ctx context.Context, p P) (P, *Command[P], error) {
		return s.call(ctx, c, p)
	})
	return run, c
}

// boundTo returns a copy of r that runs with the parent's store and
// execution settings, its own subgraphs bound the same way.
func (r *Runner[S]) boundTo(pc config) *Runner[S] {
	cfg := r.cfg
	cfg.store, cfg.durability, cfg.owner, cfg.leaseTTL = pc.store, pc.durability, pc.owner, pc.leaseTTL
	cfg.clock, cfg.sleep = pc.clock, pc.sleep
	c := &Runner[S]{
		nodes: make(map[string]*node[S], len(r.nodes)), order: r.order, edges: r.edges, conds: r.conds,
		cfg: cfg, codec: r.codec, merge: r.merge, mergeB: r.mergeB, plan: r.plan, summary: r.summary, before: r.before, after: r.after,
		hasDeferred: r.hasDeferred, hasPartial: r.hasPartial, cache: r.cache,
	}
	for name, n := range r.nodes {
		if n.sub != nil {
			cp := *n
			run, bound := n.sub.bind(cfg)
			cp.run, cp.bound = run.(nodeRun[S]), bound
			n = &cp
		}
		c.nodes[name] = n
	}
	return c
}

// call runs the subgraph node: the child run, started, resumed or read.
func (s *subgraphOf[P, C]) call(ctx context.Context, c *Runner[C], p P) (P, *Command[P], error) {
	t := taskFrom(ctx)
	if t == nil {
		return p, nil, fmt.Errorf("graph: subgraph called outside a run")
	}
	seg := namespaceSegment(t.node, t.step, t.branch)
	childID := checkpoint.ChildRunID(t.runID, seg)
	o := execOpts{child: true, stopReq: t.stop, up: func(e Event) {
		if e.Namespace == "" {
			e.Namespace = seg
		} else {
			e.Namespace = seg + NamespaceSep + e.Namespace
		}
		t.forward(e)
	}}
	var res Result[C]
	var err error
	if c.cfg.store == nil {
		res, err = c.run(ctx, childID, s.in(p), o)
	} else {
		res, err = s.drive(ctx, c, t, childID, p, o)
	}
	if err != nil {
		return p, nil, err
	}
	if res.Status == Interrupted {
		if res.stopErr == nil { // no store: the child ran afresh
			res.stopErr = &InterruptError{Index: len(t.answers), Payload: res.Interrupt.Payload}
		}
		return p, nil, res.stopErr
	}
	up := s.out(p, res.State)
	if res.goParent == "" {
		return up, nil, nil
	}
	return up, &Command[P]{Update: up, Goto: strings.Split(res.goParent, ",")}, nil
}

// drive brings the child run childID to its end or to an interrupt its
// parent task has no answer for.
func (s *subgraphOf[P, C]) drive(ctx context.Context, c *Runner[C], t *task, childID string, p P, o execOpts) (Result[C], error) {
	var res Result[C]
	cp, err := c.cfg.store.Latest(ctx, childID)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		res, err = c.run(ctx, childID, s.in(p), o)
	case err != nil:
		return res, fmt.Errorf("graph: subgraph run %s: %w", childID, err)
	case len(cp.Next) == 0 && cp.Interrupt == nil:
		st, derr := c.decode(cp)
		return Result[C]{Status: Done, State: st, Seq: cp.Seq, goParent: cp.Meta[MetaGoParent]}, derr
	case cp.Interrupt != nil:
		res.Status = Interrupted
	default:
		res, err = c.resume(ctx, childID, resumeConfig{}, o)
	}
	for err == nil && res.Status == Interrupted {
		in, idx, cerr := childInterrupt(ctx, c.cfg.store, childID)
		if cerr != nil {
			return res, cerr
		}
		rc := resumeConfig{}
		switch {
		case in.Kind == KindStop:
			if o.stopReq != nil && o.stopReq.Load() {
				res.stopErr = &InterruptError{Index: len(t.answers), kind: KindStop}
				return res, nil
			}
		case idx >= len(t.answers):
			res.stopErr = &InterruptError{Index: idx, Payload: in.Payload}
			return res, nil
		case in.Kind == KindDynamic:
			rc.value, rc.hasValue = t.answers[idx], true
		}
		res, err = c.resume(ctx, childID, rc, o)
	}
	return res, err
}

// childInterrupt returns the pending interrupt of the child run and its
// index among the child's interrupts that reach the parent (every
// checkpoint that recorded an interrupt, but stream stops).
func childInterrupt(ctx context.Context, st checkpoint.Store, childID string) (*checkpoint.Interrupt, int, error) {
	cps, err := st.List(ctx, childID, checkpoint.ListOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("graph: subgraph run %s: %w", childID, err)
	}
	if len(cps) == 0 || cps[0].Interrupt == nil {
		return nil, 0, fmt.Errorf("graph: subgraph run %s: no pending interrupt", childID)
	}
	n := 0
	for _, cp := range cps {
		if cp.Interrupt != nil && cp.Interrupt.Kind != KindStop {
			n++
		}
	}
	return cps[0].Interrupt, n - 1, nil
}

// Subgraph returns the runner of the subgraph node name of r, bound to r's
// store: its State, History and EachCheckpoint read a child run (see
// Children for their ids). It fails when name is not a subgraph node of
// state type C.
func Subgraph[C, P any](r *Runner[P], name string) (*Runner[C], error) {
	n, ok := r.nodes[name]
	if !ok || n.bound == nil {
		return nil, fmt.Errorf("%w: %q is not a subgraph node", ErrUnknownNode, name)
	}
	c, ok := n.bound.(*Runner[C])
	if !ok {
		return nil, fmt.Errorf("graph: subgraph %q runs %T, not a Runner of %T", name, n.bound, *new(C))
	}
	return c, nil
}

// SubRun is one subgraph run of a run, as SubgraphAt finds it: the
// subgraph's runner, bound to the parent's store, and the child run's id.
type SubRun[C any] struct {
	Runner *Runner[C]
	RunID  string
}

// State returns the child run's latest checkpoint.
func (s SubRun[C]) State(ctx context.Context) (Snapshot[C], error) {
	return s.Runner.State(ctx, s.RunID)
}

// History returns up to limit checkpoints of the child run, newest first
// (limit <= 0: all of them).
func (s SubRun[C]) History(ctx context.Context, limit int) ([]Snapshot[C], error) {
	return s.Runner.History(ctx, s.RunID, limit)
}

// subgraphHost is a runner of any state type, as SubgraphAt walks them.
type subgraphHost interface {
	boundSub(name string) (any, bool)
}

func (r *Runner[S]) boundSub(name string) (any, bool) {
	n, ok := r.nodes[name]
	if !ok || n.bound == nil {
		return nil, false
	}
	return n.bound, true
}

// SubgraphAt finds a subgraph run of run runID by its path of subgraph
// nodes, outermost first, at any depth: each element names a subgraph node
// of the graph before it, as "node" (that node's latest run in its parent
// run: the highest step, then the highest branch) or as the namespace
// segment "node:step:branch" of one run (see Children). C is the state
// type of the last subgraph.
//
//	sub, err := graph.SubgraphAt[Clearance](ctx, r, "run-1", "review", "legal")
//	snap, err := sub.State(ctx)
func SubgraphAt[C, P any](ctx context.Context, r *Runner[P], runID string, path ...string) (SubRun[C], error) {
	if r.cfg.store == nil {
		return SubRun[C]{}, ErrNoStore
	}
	if len(path) == 0 {
		return SubRun[C]{}, fmt.Errorf("graph: SubgraphAt needs a path of subgraph nodes")
	}
	runs, err := checkpoint.ChildRuns(ctx, r.cfg.store, runID)
	if err != nil {
		return SubRun[C]{}, fmt.Errorf("graph: run %s: %w", runID, err)
	}
	var cur subgraphHost = r
	id := runID
	for _, seg := range path {
		node, exact := seg, ""
		b, ok := cur.boundSub(seg)
		if !ok {
			if n, _, _, parsed := parseSegment(seg); parsed {
				node, exact = n, seg
				b, ok = cur.boundSub(n)
			}
		}
		if !ok {
			return SubRun[C]{}, fmt.Errorf("%w: %q is not a subgraph node (path %v)", ErrUnknownNode, seg, path)
		}
		best, bestStep, bestBranch := "", -1, -1
		for _, ri := range runs {
			rest, ok := strings.CutPrefix(ri.RunID, id+NamespaceSep)
			if !ok || strings.Contains(rest, NamespaceSep) {
				continue
			}
			n, step, branch, ok := parseSegment(rest)
			switch {
			case !ok || n != node:
			case exact != "":
				if rest == exact {
					best = ri.RunID
				}
			case step > bestStep || (step == bestStep && branch > bestBranch):
				best, bestStep, bestBranch = ri.RunID, step, branch
			}
		}
		if best == "" {
			return SubRun[C]{}, fmt.Errorf("%w: run %s has no run of subgraph %s", ErrRunNotFound, id, seg)
		}
		host, ok := b.(subgraphHost)
		if !ok {
			return SubRun[C]{}, fmt.Errorf("graph: subgraph %q runs %T", seg, b)
		}
		cur, id = host, best
	}
	c, ok := cur.(*Runner[C])
	if !ok {
		return SubRun[C]{}, fmt.Errorf("graph: subgraph %q runs %T, not a Runner of %T", path[len(path)-1], cur, *new(C))
	}
	return SubRun[C]{Runner: c, RunID: id}, nil
}

// parseSegment splits a namespace segment "node:step:branch".
func parseSegment(seg string) (node string, step, branch int, ok bool) {
	i := strings.LastIndex(seg, ":")
	if i < 0 {
		return "", 0, 0, false
	}
	j := strings.LastIndex(seg[:i], ":")
	if j < 0 {
		return "", 0, 0, false
	}
	step, err1 := strconv.Atoi(seg[j+1 : i])
	branch, err2 := strconv.Atoi(seg[i+1:])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return seg[:j], step, branch, true
}

// ChildRun is a subgraph run of a run, as Children lists it.
type ChildRun struct {
	RunID     string // the child's run id, for the subgraph runner's State and History
	Namespace string // the path of subgraph nodes, "node:step:branch" joined by NamespaceSep
	Status    string // the status of its latest checkpoint
}

// Children lists the subgraph runs of runID at every depth, in the order
// the store lists runs (newest activity first).
func (r *Runner[S]) Children(ctx context.Context, runID string) ([]ChildRun, error) {
	if r.cfg.store == nil {
		return nil, ErrNoStore
	}
	runs, err := checkpoint.ChildRuns(ctx, r.cfg.store, runID)
	if err != nil {
		return nil, fmt.Errorf("graph: run %s: %w", runID, err)
	}
	out := make([]ChildRun, len(runs))
	for i, ri := range runs {
		out[i] = ChildRun{RunID: ri.RunID, Namespace: strings.TrimPrefix(ri.RunID, runID+NamespaceSep), Status: ri.Status}
	}
	return out, nil
}
