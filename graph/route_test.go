package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// TestRouteNamesAndSends: one router type (AddRoute) chooses named nodes,
// sends, or both; Compile checks its declared targets, and a choice outside
// them fails the step, as for the older router types.
func TestRouteNamesAndSends(t *testing.T) {
	type st struct {
		Items []string `graph:"append"`
		Item  string
		Mode  string
	}
	route := func(_ context.Context, s st) (graph.Routes[st], error) {
		switch s.Mode {
		case "name":
			return graph.Goto[st]("tail"), nil
		case "send":
			return graph.SendEach("each", []string{"x", "y"}, func(i string) st { return st{Item: i} }), nil
		case "both":
			r := graph.SendEach("each", []string{"z"}, func(i string) st { return st{Item: i} })
			r.Nodes = []string{"tail"}
			return r, nil
		case "end":
			return graph.Goto[st](graph.END), nil
		case "stray":
			return graph.Goto[st]("each", "nowhere"), nil
		}
		return graph.Routes[st]{}, nil
	}
	g := graph.New[st]().
		AddNode("head", func(_ context.Context, s st) (st, error) { return st{Items: []string{"head"}}, nil }, graph.Partial()).
		AddNode("each", func(_ context.Context, s st) (st, error) { return st{Items: []string{"each " + s.Item}}, nil }, graph.Partial()).
		AddNode("tail", func(_ context.Context, s st) (st, error) { return st{Items: []string{"tail"}}, nil }, graph.Partial()).
		AddEdge(graph.START, "head").
		AddRoute("head", route, "each", "tail", graph.END).
		AddEdge("each", graph.END).AddEdge("tail", graph.END)
	r := mustCompile(t, g, graph.WithStore(checkpoint.NewMemory()))
	for _, tc := range []struct{ mode, want string }{
		{"name", "[head tail]"},
		{"send", "[head each x each y]"},
		{"both", "[head tail each z]"},
		{"end", "[head]"},
		{"stray", `error: graph: node head failed in step 1: graph: router after head chose "nowhere", which is not a declared target [each tail __end__]`},
		{"none", "error: graph: node head failed in step 1: graph: router after head chose no target"},
	} {
		res, err := r.Run(context.Background(), tc.mode, st{Mode: tc.mode})
		got := fmt.Sprint(res.State.Items)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.mode, got, tc.want)
		}
	}

	_, err := graph.New[st]().
		AddNode("a", func(_ context.Context, s st) (st, error) { return s, nil }).
		AddEdge(graph.START, "a").
		AddRoute("a", route, "b", graph.END).
		AddRoute("a", route, graph.END).
		AddRoute("x", nil, graph.END).
		Compile()
	for _, want := range []string{`conditional edge a -> unknown node "b"`, `node "a" has two conditional edges`, `route from "x" has a nil router`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile = %v, want %q", err, want)
		}
	}
}

// TestSubgraphInTheChain: a subgraph of the graph's own state type is one
// call in the builder chain; SubgraphAt reads a child's runs by path, at
// any depth, its latest run or one named by its namespace segment.
func TestSubgraphInTheChain(t *testing.T) {
	type st struct {
		Log   []string `graph:"append"`
		Round int      `graph:"sum"`
	}
	add := func(name string) graph.NodeFunc[st] {
		return func(_ context.Context, s st) (st, error) { return st{Log: []string{name}}, nil }
	}
	inner := mustCompile(t, graph.New[st]().
		AddNode("deep", add("deep"), graph.Partial()).
		AddEdge(graph.START, "deep").AddEdge("deep", graph.END), graph.WithStore(checkpoint.NewMemory()))
	outer := mustCompile(t, graph.New[st]().
		AddNode("pre", add("pre"), graph.Partial()).
		AddSubgraph("inner", inner).
		AddEdge(graph.START, "pre").AddEdge("pre", "inner").AddEdge("inner", graph.END))
	r := mustCompile(t, graph.New[st]().
		AddNode("tick", func(_ context.Context, s st) (st, error) { return st{Round: 1}, nil }, graph.Partial()).
		AddSubgraph("outer", outer).
		AddEdge(graph.START, "tick").AddEdge("tick", "outer").
		AddConditionalEdge("outer", func(_ context.Context, s st) ([]string, error) {
			if s.Round < 2 {
				return []string{"tick"}, nil
			}
			return []string{graph.END}, nil
		}, "tick", graph.END),
		graph.WithStore(checkpoint.NewMemory()))
	ctx := context.Background()
	res, err := r.Run(ctx, "r", st{})
	if err != nil {
		t.Fatal(err)
	}
	// tick (round 1), outer (pre, then inner: deep), tick (round 2), outer.
	if fmt.Sprint(res.State.Log, res.State.Round) != "[pre deep pre deep] 2" {
		t.Fatalf("final state %+v", res.State)
	}
	latest, err := graph.SubgraphAt[st](ctx, r, "r", "outer")
	if err != nil || latest.RunID != "r|outer:4:0" {
		t.Fatalf("SubgraphAt(outer) = %+v, %v; want the run of step 4", latest, err)
	}
	first, err := graph.SubgraphAt[st](ctx, r, "r", "outer:2:0")
	if err != nil || first.RunID != "r|outer:2:0" {
		t.Fatalf("SubgraphAt(outer:2:0) = %+v, %v", first, err)
	}
	deep, err := graph.SubgraphAt[st](ctx, r, "r", "outer:2:0", "inner")
	if err != nil || deep.RunID != "r|outer:2:0|inner:2:0" {
		t.Fatalf("SubgraphAt(outer:2:0, inner) = %+v, %v", deep, err)
	}
	snap, err := deep.State(ctx)
	if err != nil || fmt.Sprint(snap.State.Log) != "[pre deep]" || snap.Status != graph.StatusDone {
		t.Fatalf("deep state %+v, %v", snap, err)
	}
	hist, err := first.History(ctx, 0)
	if err != nil || len(hist) != 3 || !slices.Equal(hist[0].Ran, []string{"inner"}) {
		t.Fatalf("outer history: %d checkpoints, %v", len(hist), err)
	}

	for _, tc := range []struct {
		path []string
		want error
		msg  string
	}{
		{[]string{"tick"}, graph.ErrUnknownNode, `"tick" is not a subgraph node`},
		{[]string{"outer:9:0"}, graph.ErrRunNotFound, "run r has no run of subgraph outer:9:0"},
		{nil, nil, "needs a path"},
	} {
		_, err := graph.SubgraphAt[st](ctx, r, "r", tc.path...)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("SubgraphAt(%v) = %v, want %q", tc.path, err, tc.msg)
		}
	}
	if _, err := graph.SubgraphAt[int](ctx, r, "r", "outer"); err == nil || !strings.Contains(err.Error(), "not a Runner of int") {
		t.Errorf("SubgraphAt[int] = %v", err)
	}
}
