package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// parentState and childState are the two schemas of LangGraph's subgraph
// how-to: the parent knows foo; the child bar and baz.
type parentState struct {
	Foo string
}

type childState struct {
	Bar string
	Baz string
}

func childGraph(log *runLog) *graph.Graph[childState] {
	return graph.New[childState]().
		AddNode("subgraph_node_1", func(ctx context.Context, s childState) (childState, error) {
			log.ran(ctx, "subgraph_node_1")
			s.Baz = "baz"
			return s, nil
		}).
		AddNode("subgraph_node_2", func(ctx context.Context, s childState) (childState, error) {
			log.ran(ctx, "subgraph_node_2")
			s.Bar += s.Baz
			return s, nil
		}).
		AddEdge(graph.START, "subgraph_node_1").
		AddEdge("subgraph_node_1", "subgraph_node_2").
		AddEdge("subgraph_node_2", graph.END)
}

// TestSubgraphDifferentSchema reproduces LangGraph's subgraph how-to with a
// different state schema (https://langchain-ai.github.io/langgraph/how-tos/subgraph/,
// "Add a node function that invokes the subgraph"): node_1 makes foo
// "hi! foo"; node_2 is the subgraph, given bar = foo; its nodes make baz
// "baz" and bar bar+baz; the parent takes foo = bar. Final foo: "hi! foobaz".
// The child's checkpoints are kept under its own run id in the same store.
func TestSubgraphDifferentSchema(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		var log runLog
		child := mustCompile(t, childGraph(&log))
		g := graph.New[parentState]().
			AddNode("node_1", func(ctx context.Context, s parentState) (parentState, error) {
				log.ran(ctx, "node_1")
				return parentState{Foo: "hi! " + s.Foo}, nil
			})
		graph.AddSubgraph(g, "node_2", child,
			func(p parentState) childState { return childState{Bar: p.Foo} },
			func(p parentState, c childState) parentState { return parentState{Foo: c.Bar} })
		g.AddEdge(graph.START, "node_1").AddEdge("node_1", "node_2").AddEdge("node_2", graph.END)
		r := mustCompile(t, g, graph.WithStore(store))
		ctx := context.Background()
		res, err := r.Run(ctx, "p", parentState{Foo: "foo"})
		if err != nil {
			t.Fatal(err)
		}
		if res.State.Foo != "hi! foobaz" {
			t.Errorf("foo = %q, want %q", res.State.Foo, "hi! foobaz")
		}
		// The log groups runs by step number: node_1 is the parent's step 1,
		// the subgraph's nodes its own steps 1 and 2.
		if got, want := log.String(), "node_1+subgraph_node_1 subgraph_node_2"; got != want {
			t.Errorf("node runs %q, want %q", got, want)
		}
		kids, err := r.Children(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) != 1 || kids[0].RunID != graph.ChildRunID("p", "node_2", 2, 0) || kids[0].Namespace != "node_2:2:0" || kids[0].Status != graph.StatusDone {
			t.Fatalf("children %+v", kids)
		}
		sub, err := graph.Subgraph[childState](r, "node_2")
		if err != nil {
			t.Fatal(err)
		}
		snap, err := sub.State(ctx, kids[0].RunID)
		if err != nil {
			t.Fatal(err)
		}
		if snap.State != (childState{Bar: "hi! foobaz", Baz: "baz"}) || snap.Step != 2 {
			t.Errorf("child state %+v at step %d", snap.State, snap.Step)
		}
		hist, err := sub.History(ctx, kids[0].RunID, 0)
		if err != nil || len(hist) != 3 {
			t.Fatalf("child history: %d checkpoints, %v", len(hist), err)
		}
		if _, err := graph.Subgraph[parentState](r, "node_2"); err == nil {
			t.Error("Subgraph with the wrong state type succeeded")
		}
	})
}

// approvalChild asks twice (two interrupts in two nodes) and records answers.
func approvalChild(runs map[string]*atomic.Int32) *graph.Graph[trail] {
	ask := func(name string) graph.NodeFunc[trail] {
		return func(ctx context.Context, s trail) (trail, error) {
			runs[name].Add(1)
			raw, err := graph.Interrupt(ctx, name+"?")
			if err != nil {
				return s, err
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return s, err
			}
			return s.with(name + "=" + v), nil
		}
	}
	return graph.New[trail]().
		AddNode("prepare", func(ctx context.Context, s trail) (trail, error) {
			runs["prepare"].Add(1)
			return s.with("prepare"), nil
		}).
		AddNode("first", ask("first")).
		AddNode("second", ask("second")).
		AddEdge(graph.START, "prepare").AddEdge("prepare", "first").
		AddEdge("first", "second").AddEdge("second", graph.END)
}

func approvalParent(t *testing.T, runs map[string]*atomic.Int32, store checkpoint.Store) *graph.Runner[trail] {
	child := mustCompile(t, approvalChild(runs))
	g := graph.New[trail]().AddNode("plan", step("plan")).AddNode("ship", step("ship"))
	graph.AddSubgraph(g, "review", child,
		func(p trail) trail { return trail{} },
		func(p trail, c trail) trail {
			out := p
			for _, l := range c.Log {
				out = out.with("review:" + l)
			}
			return out
		})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "review").AddEdge("review", "ship").AddEdge("ship", graph.END)
	return mustCompile(t, g, graph.WithStore(store))
}

// TestSubgraphInterrupt reproduces LangGraph's "view and update state in
// subgraphs" how-to (https://langchain-ai.github.io/langgraph/how-tos/subgraphs-manage-state):
// an interrupt inside the subgraph pauses the whole run; the parent's
// state shows it waiting in the subgraph node, the child's state shows the
// node that asked; resuming goes back into the child, which goes on from
// where it stopped (its finished nodes are not run again). Here the child
// asks twice; each answer reaches the right question, also with a fresh
// runner in between (as after a restart).
func TestSubgraphInterrupt(t *testing.T) {
	eachStore(t, func(t *testing.T, store checkpoint.Store) {
		runs := map[string]*atomic.Int32{"prepare": {}, "first": {}, "second": {}}
		ctx := context.Background()
		r := approvalParent(t, runs, store)
		res, err := r.Run(ctx, "p", trail{})
		if err != nil || res.Status != graph.Interrupted {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		if in := res.Interrupt; in.Node != "review" || string(in.Payload) != `"first?"` || in.Index != 0 {
			t.Fatalf("interrupt %+v", in)
		}
		sub, err := graph.Subgraph[trail](r, "review")
		if err != nil {
			t.Fatal(err)
		}
		childID := graph.ChildRunID("p", "review", 2, 0)
		snap, err := sub.State(ctx, childID)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Interrupt == nil || snap.Interrupt.Node != "first" || fmt.Sprint(snap.State.Log) != "[prepare]" {
			t.Fatalf("child snapshot %+v", snap)
		}

		res, err = approvalParent(t, runs, store).Resume(ctx, "p", graph.WithResume("yes"))
		if err != nil || res.Status != graph.Interrupted || string(res.Interrupt.Payload) != `"second?"` || res.Interrupt.Index != 1 {
			t.Fatalf("first Resume = %+v, %v", res, err)
		}
		res, err = approvalParent(t, runs, store).Resume(ctx, "p", graph.WithResume("ok"))
		if err != nil || res.Status != graph.Done {
			t.Fatalf("second Resume = %+v, %v", res, err)
		}
		if want := "[plan review:prepare review:first=yes review:second=ok ship]"; fmt.Sprint(res.State.Log) != want {
			t.Errorf("log %v, want %s", res.State.Log, want)
		}
		if runs["prepare"].Load() != 1 || runs["first"].Load() != 2 || runs["second"].Load() != 2 {
			t.Errorf("child runs: prepare %d first %d second %d; want 1 2 2",
				runs["prepare"].Load(), runs["first"].Load(), runs["second"].Load())
		}
	})
}

// TestSubgraphCommandToParent reproduces Command(graph=Command.PARENT) from
// LangGraph's Command how-to (https://langchain-ai.github.io/langgraph/how-tos/command,
// "Navigating to a node in a parent graph"): a node of the subgraph ends it
// and sends the parent to one of its nodes, with its update.
func TestSubgraphCommandToParent(t *testing.T) {
	var log runLog
	child := graph.New[foo]().
		AddCommandNode("node_a", func(ctx context.Context, s foo) (graph.Command[foo], error) {
			log.ran(ctx, "node_a")
			return graph.Command[foo]{Update: foo{Foo: "a"}, Goto: []string{s.Pick}, Parent: true}, nil
		}, nil, graph.ParentTargets("node_b", "node_c")).
		AddEdge(graph.START, "node_a")
	cr := mustCompile(t, child)
	parent := func(store checkpoint.Store) *graph.Graph[foo] {
		g := graph.New[foo]()
		graph.AddSubgraph(g, "subgraph", cr, func(p foo) foo { return p }, func(p, c foo) foo { return foo{Foo: c.Foo, Pick: p.Pick} })
		return g.
			AddNode("node_b", func(ctx context.Context, s foo) (foo, error) { log.ran(ctx, "node_b"); s.Foo += "|b"; return s, nil }).
			AddNode("node_c", func(ctx context.Context, s foo) (foo, error) { log.ran(ctx, "node_c"); s.Foo += "|c"; return s, nil }).
			AddEdge(graph.START, "subgraph").
			AddEdge("node_b", graph.END).AddEdge("node_c", graph.END)
	}
	store := checkpoint.NewMemory()
	r := mustCompile(t, parent(store), graph.WithStore(store))
	res, err := r.Run(context.Background(), "p", foo{Pick: "node_c"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Foo != "a|c" {
		t.Errorf("foo = %q, want a|c", res.State.Foo)
	}
	// The parent must have the nodes the child may go to.
	g := graph.New[foo]()
	graph.AddSubgraph(g, "subgraph", cr, func(p foo) foo { return p }, func(p, c foo) foo { return c })
	g.AddNode("node_b", func(_ context.Context, s foo) (foo, error) { return s, nil }).
		AddEdge(graph.START, "subgraph").AddEdge("node_b", graph.END)
	_, err = g.Compile()
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), `command subgraph -> unknown node "node_c"`) {
		t.Fatalf("Compile = %v", err)
	}
}

// TestSubgraphInterruptWithoutStore: without a store the child's interrupt
// still stops the whole run (which then cannot be resumed: ErrNoStore).
func TestSubgraphInterruptWithoutStore(t *testing.T) {
	runs := map[string]*atomic.Int32{"prepare": {}, "first": {}, "second": {}}
	child := mustCompile(t, approvalChild(runs))
	g := graph.New[trail]()
	graph.AddSubgraph(g, "review", child, func(p trail) trail { return p }, func(_, c trail) trail { return c })
	g.AddEdge(graph.START, "review").AddEdge("review", graph.END)
	r := mustCompile(t, g)
	res, err := r.Run(context.Background(), "p", trail{})
	if err != nil || res.Status != graph.Interrupted || res.Interrupt.Node != "review" || string(res.Interrupt.Payload) != `"first?"` {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if _, err := r.Resume(context.Background(), "p", graph.WithResume("yes")); !errors.Is(err, graph.ErrNoStore) {
		t.Fatalf("Resume = %v, want ErrNoStore", err)
	}
}
