package graph_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// aggregate is the state of LangGraph's deferred-node how-to: each node
// adds its name; seen records what each node found on its arrival.
type aggregate struct {
	Aggregate []string
}

// mergeAggregate is the how-to's reducer: the branches' additions are
// appended in branch order.
func mergeAggregate(_ context.Context, base aggregate, branches []aggregate) (aggregate, error) {
	out := aggregate{Aggregate: slices.Clone(base.Aggregate)}
	for _, b := range branches {
		out.Aggregate = append(out.Aggregate, b.Aggregate[len(base.Aggregate):]...)
	}
	return out, nil
}

// TestDeferredNode reproduces LangGraph's deferred-node how-to
// (https://langchain-ai.github.io/langgraphjs/how-tos/defer-node-execution):
// a fans out to b and c; b goes on to b_2; b_2 and c both lead to d,
// which is deferred, so it runs once, after b_2, and sees
// [A B C B_2]. The final aggregate is [A B C B_2 D]. Without Defer, d
// would run twice (after c, and after b_2).
func TestDeferredNode(t *testing.T) {
	for _, deferred := range []bool{true, false} {
		var mu sync.Mutex
		var seen []string
		add := func(name string) graph.NodeFunc[aggregate] {
			return func(_ context.Context, s aggregate) (aggregate, error) {
				mu.Lock()
				seen = append(seen, name+"@"+slicesJoin(s.Aggregate))
				mu.Unlock()
				return aggregate{Aggregate: append(slices.Clip(s.Aggregate), name)}, nil
			}
		}
		var opts []graph.NodeOption
		if deferred {
			opts = append(opts, graph.Defer())
		}
		g := graph.New[aggregate]().
			AddNode("a", add("A")).AddNode("b", add("B")).AddNode("b_2", add("B_2")).
			AddNode("c", add("C")).AddNode("d", add("D"), opts...).
			AddEdge(graph.START, "a").
			AddEdge("a", "b").AddEdge("a", "c").
			AddEdge("b", "b_2").AddEdge("b_2", "d").AddEdge("c", "d").
			AddEdge("d", graph.END)
		r := mustCompile(t, g, graph.WithStore(checkpoint.NewMemory()), graph.WithMerge(mergeAggregate))
		res, err := r.Run(context.Background(), "r", aggregate{})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(seen[1:3]) // b and c run at once
		if deferred {
			if want := []string{"A@", "B@A", "C@A", "B_2@A,B,C", "D@A,B,C,B_2"}; !slices.Equal(seen, want) {
				t.Errorf("deferred: runs %v, want %v", seen, want)
			}
			if want := []string{"A", "B", "C", "B_2", "D"}; !slices.Equal(res.State.Aggregate, want) {
				t.Errorf("deferred: aggregate %v, want %v", res.State.Aggregate, want)
			}
		} else if n := countPrefix(seen, "D@"); n != 2 {
			t.Errorf("without Defer d ran %d times (%v), want 2", n, seen)
		}
	}
}

func slicesJoin(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func countPrefix(s []string, p string) int {
	n := 0
	for _, x := range s {
		if len(x) >= len(p) && x[:len(p)] == p {
			n++
		}
	}
	return n
}

// cached is the state of LangGraph's node-caching how-to.
type cached struct {
	X      int
	Result int
}

// TestNodeCache reproduces LangGraph's node-caching how-to
// (https://langchain-ai.github.io/langgraphjs/how-tos/node-caching, and the
// CachePolicy reference https://reference.langchain.com/python/langgraph/types/CachePolicy):
// a second run with the same input within the TTL does not run the
// expensive node and has the same result; after the TTL it runs again; a
// Key function picks what counts as the same input.
func TestNodeCache(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	runs := 0
	expensive := func(_ context.Context, s cached) (cached, error) {
		runs++
		s.Result = s.X * 2
		return s, nil
	}
	g := graph.New[cached]().
		AddNode("expensive_node", expensive, graph.Cache(graph.CachePolicy{TTL: 8 * time.Second})).
		AddEdge(graph.START, "expensive_node").
		AddEdge("expensive_node", graph.END)
	r := mustCompile(t, g, graph.WithClock(clock))
	var cachedEvents int
	r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.NodeCached {
			cachedEvents++
		}
	})
	ctx := context.Background()
	for i, tc := range []struct {
		x        int
		wait     time.Duration
		wantRuns int
	}{
		{5, 0, 1},               // first run: the node runs
		{5, time.Second, 1},     // same input within the TTL: cached
		{6, 0, 2},               // another input: runs
		{5, 8 * time.Second, 3}, // the TTL passed: runs again
	} {
		advance(tc.wait)
		res, err := r.Run(ctx, "r"+string(rune('0'+i)), cached{X: tc.x})
		if err != nil {
			t.Fatal(err)
		}
		if res.State.Result != tc.x*2 || runs != tc.wantRuns {
			t.Errorf("run %d: result %d, node runs %d; want %d, %d", i, res.State.Result, runs, tc.x*2, tc.wantRuns)
		}
	}
	if cachedEvents != 1 {
		t.Errorf("%d NodeCached events, want 1", cachedEvents)
	}

	// A key function: inputs with the same key share a result.
	keyed := graph.New[cached]().
		AddNode("n", expensive, graph.Cache(graph.CachePolicy{Key: func(in any) string { return "same" }})).
		AddEdge(graph.START, "n").AddEdge("n", graph.END)
	rk := mustCompile(t, keyed)
	runs = 0
	a, _ := rk.Run(ctx, "a", cached{X: 1})
	b, _ := rk.Run(ctx, "b", cached{X: 2})
	if runs != 1 || a.State.Result != 2 || b.State.Result != 2 {
		t.Errorf("keyed: %d runs, results %d %d; want 1 run, 2 2", runs, a.State.Result, b.State.Result)
	}
}

// TestDeferredBesideSends: a deferred node held while sends are due keeps
// its place before them, and the sends keep their inputs.
func TestDeferredBesideSends(t *testing.T) {
	add := func(name string) graph.NodeFunc[aggregate] {
		return func(_ context.Context, s aggregate) (aggregate, error) {
			return aggregate{Aggregate: append(slices.Clip(s.Aggregate), name)}, nil
		}
	}
	g := graph.New[aggregate]().
		AddNode("a", add("A")).AddNode("b", add("B")).AddNode("d", add("D"), graph.Defer()).
		AddNode("w", func(_ context.Context, s aggregate) (aggregate, error) {
			return aggregate{Aggregate: []string{"W" + s.Aggregate[0]}}, nil
		}).
		AddEdge(graph.START, "a").
		AddEdge("a", "b").AddEdge("a", "d").
		AddSendEdge("b", func(context.Context, aggregate) (graph.Routes[aggregate], error) {
			return graph.Routes[aggregate]{Sends: []graph.Send[aggregate]{
				{Node: "w", Input: aggregate{Aggregate: []string{"1"}}},
				{Node: "w", Input: aggregate{Aggregate: []string{"2"}}},
			}}, nil
		}, "w").
		AddEdge("w", "d").AddEdge("d", graph.END)
	merge := func(_ context.Context, base aggregate, branches []aggregate) (aggregate, error) {
		out := aggregate{Aggregate: slices.Clone(base.Aggregate)}
		for _, b := range branches {
			if len(b.Aggregate) == 1 && strings.HasPrefix(b.Aggregate[0], "W") {
				out.Aggregate = append(out.Aggregate, b.Aggregate...) // a send
			} else {
				out.Aggregate = append(out.Aggregate, b.Aggregate[len(base.Aggregate):]...)
			}
		}
		return out, nil
	}
	for _, store := range []checkpoint.Store{nil, checkpoint.NewMemory()} {
		opts := []graph.Option{graph.WithMerge(merge)}
		if store != nil {
			opts = append(opts, graph.WithStore(store))
		}
		r := mustCompile(t, g, opts...)
		res, err := r.Run(context.Background(), "r", aggregate{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"A", "B", "W1", "W2", "D"}; !slices.Equal(res.State.Aggregate, want) {
			t.Errorf("aggregate %v, want %v", res.State.Aggregate, want)
		}
	}
}
