package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// squares is the state of the Send example: the numbers to square, one
// branch's input (N) and the results.
type squares struct {
	Numbers []int
	N       int
	Squares []int
}

func ExampleGraph_AddSendEdge() {
	fanOut := func(_ context.Context, s squares) (graph.Routes[squares], error) {
		var r graph.Routes[squares]
		for _, n := range s.Numbers {
			r.Sends = append(r.Sends, graph.Send[squares]{Node: "square", Input: squares{N: n}})
		}
		return r, nil
	}
	square := func(_ context.Context, s squares) (squares, error) {
		return squares{Squares: []int{s.N * s.N}}, nil // a branch returns only its part
	}
	merge := func(_ context.Context, base squares, branches []squares) (squares, error) {
		out := base
		out.Squares = slices.Clone(base.Squares)
		for _, b := range branches { // in branch order, whatever order they finished in
			out.Squares = append(out.Squares, b.Squares...)
		}
		return out, nil
	}
	g := graph.New[squares]().
		AddNode("start", func(_ context.Context, s squares) (squares, error) { return s, nil }).
		AddNode("square", square).
		AddEdge(graph.START, "start").
		AddSendEdge("start", fanOut, "square").
		AddEdge("square", graph.END)
	r, err := g.Compile(graph.WithMerge(merge))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := r.Run(context.Background(), "squares", squares{Numbers: []int{1, 2, 3, 4}})
	fmt.Println(res.State.Squares, err)
	// Output: [1 4 9 16] <nil>
}

func ExampleGraph_AddCommandNode() {
	type doc struct{ Text, Route string }
	triage := func(_ context.Context, s doc) (graph.Command[doc], error) {
		next := "publish"
		if strings.Contains(s.Text, "TODO") {
			next = "edit"
		}
		return graph.Command[doc]{Update: doc{Text: s.Text, Route: "triage->" + next}, Goto: []string{next}}, nil
	}
	edit := func(_ context.Context, s doc) (doc, error) {
		s.Text = strings.ReplaceAll(s.Text, "TODO", "done")
		return s, nil
	}
	g := graph.New[doc]().
		AddCommandNode("triage", triage, []string{"edit", "publish"}).
		AddNode("edit", edit).
		AddNode("publish", func(_ context.Context, s doc) (doc, error) { return s, nil }).
		AddEdge(graph.START, "triage").
		AddEdge("edit", "publish").
		AddEdge("publish", graph.END)
	r, _ := g.Compile()
	res, err := r.Run(context.Background(), "d", doc{Text: "intro TODO"})
	fmt.Println(res.State.Route, "|", res.State.Text, err)
	// Output: triage->edit | intro done <nil>
}

func ExampleTask() {
	type order struct{ Receipt string }
	calls := 0
	pay := func(ctx context.Context, s order) (order, error) {
		receipt, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			calls++ // the side effect: runs once per step, even if the node runs again
			return "receipt-42", nil
		})
		if err != nil {
			return s, err
		}
		if _, err := graph.Interrupt(ctx, "ship?"); err != nil {
			return s, err // the node will run again on Resume
		}
		return order{Receipt: receipt}, nil
	}
	g := graph.New[order]().AddNode("pay", pay).AddEdge(graph.START, "pay").AddEdge("pay", graph.END)
	r, _ := g.Compile(graph.WithStore(checkpoint.NewMemory()))
	ctx := context.Background()
	res, _ := r.Run(ctx, "o", order{})
	fmt.Println(res.Status, calls)
	res, err := r.Resume(ctx, "o", graph.WithResume(true))
	fmt.Println(res.Status, res.State.Receipt, calls, err)
	// Output:
	// interrupted 1
	// done receipt-42 1 <nil>
}

func ExampleAddSubgraph() {
	type inner struct{ Words []string }
	type outer struct{ Sentence string }
	child, _ := graph.New[inner]().
		AddNode("shout", func(_ context.Context, s inner) (inner, error) {
			out := inner{}
			for _, w := range s.Words {
				out.Words = append(out.Words, strings.ToUpper(w))
			}
			return out, nil
		}).
		AddEdge(graph.START, "shout").AddEdge("shout", graph.END).
		Compile()
	g := graph.New[outer]()
	graph.AddSubgraph(g, "loud", child,
		func(p outer) inner { return inner{Words: strings.Fields(p.Sentence)} },
		func(p outer, c inner) outer { return outer{Sentence: strings.Join(c.Words, " ")} })
	g.AddEdge(graph.START, "loud").AddEdge("loud", graph.END)
	store := checkpoint.NewMemory()
	r, _ := g.Compile(graph.WithStore(store))
	ctx := context.Background()
	res, err := r.Run(ctx, "s", outer{Sentence: "hello subgraph"})
	fmt.Println(res.State.Sentence, err)
	kids, _ := r.Children(ctx, "s")
	sub, _ := graph.Subgraph[inner](r, "loud")
	snap, _ := sub.State(ctx, kids[0].RunID)
	fmt.Println(kids[0].RunID, snap.State.Words)
	// Output:
	// HELLO SUBGRAPH <nil>
	// s|loud:1:0 [HELLO SUBGRAPH]
}

func ExampleRunner_Stream() {
	g := graph.New[greeting]().
		AddNode("hello", func(ctx context.Context, s greeting) (greeting, error) {
			graph.Emit(ctx, "progress", "half way")
			s.Message = "hello, " + s.Name
			return s, nil
		}).
		AddEdge(graph.START, "hello").
		AddEdge("hello", graph.END)
	r, _ := g.Compile(graph.WithStore(checkpoint.NewMemory()))
	for e, err := range r.Stream(context.Background(), "s", greeting{Name: "gopher"}, graph.StreamUpdates, graph.StreamCustom) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch e.Kind {
		case graph.Custom:
			fmt.Println(e.Name, e.Payload)
		case graph.NodeUpdate:
			fmt.Println(e.Node, e.Payload.(greeting).Message)
		}
	}
	// Output:
	// progress half way
	// hello hello, gopher
}

func ExampleDefer() {
	type agg struct{ Log []string }
	add := func(name string) graph.NodeFunc[agg] {
		return func(_ context.Context, s agg) (agg, error) {
			return agg{Log: append(slices.Clip(s.Log), name)}, nil
		}
	}
	merge := func(_ context.Context, base agg, branches []agg) (agg, error) {
		out := agg{Log: slices.Clone(base.Log)}
		for _, b := range branches {
			out.Log = append(out.Log, b.Log[len(base.Log):]...)
		}
		return out, nil
	}
	g := graph.New[agg]().
		AddNode("a", add("a")).AddNode("short", add("short")).
		AddNode("long1", add("long1")).AddNode("long2", add("long2")).
		AddNode("join", add("join"), graph.Defer()). // waits for the longer branch
		AddEdge(graph.START, "a").
		AddEdge("a", "short").AddEdge("a", "long1").AddEdge("long1", "long2").
		AddEdge("short", "join").AddEdge("long2", "join").AddEdge("join", graph.END)
	r, _ := g.Compile(graph.WithMerge(merge))
	res, err := r.Run(context.Background(), "d", agg{})
	fmt.Println(res.State.Log, err)
	// Output: [a short long1 long2 join] <nil>
}

func ExampleCache() {
	calls := 0
	g := graph.New[greeting]().
		AddNode("hello", func(_ context.Context, s greeting) (greeting, error) {
			calls++
			s.Message = "hello, " + s.Name
			return s, nil
		}, graph.Cache(graph.CachePolicy{TTL: time.Minute})).
		AddEdge(graph.START, "hello").AddEdge("hello", graph.END)
	r, _ := g.Compile()
	for _, id := range []string{"a", "b"} {
		res, _ := r.Run(context.Background(), id, greeting{Name: "gopher"})
		fmt.Println(res.State.Message, calls)
	}
	// Output:
	// hello, gopher 1
	// hello, gopher 1
}

func ExampleRunner_Mermaid() {
	g := graph.New[greeting]().
		AddNode("hello", func(_ context.Context, s greeting) (greeting, error) { return s, nil }).
		AddNode("bye", func(_ context.Context, s greeting) (greeting, error) { return s, nil }).
		AddEdge(graph.START, "hello").
		AddConditionalEdge("hello", func(context.Context, greeting) ([]string, error) { return []string{"bye"}, nil }, "bye", graph.END).
		AddEdge("bye", graph.END)
	r, _ := g.Compile()
	fmt.Print(r.Mermaid())
	// Output:
	// flowchart TD
	// 	__start__([start])
	// 	hello[hello]
	// 	bye[bye]
	// 	__end__([end])
	// 	__start__ --> hello
	// 	bye --> __end__
	// 	hello -.-> bye
	// 	hello -.-> __end__
}
