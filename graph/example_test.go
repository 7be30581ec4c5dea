package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

type greeting struct {
	Name    string
	Message string
}

func Example() {
	hello := func(_ context.Context, s greeting) (greeting, error) {
		s.Message = "hello, " + s.Name
		return s, nil
	}
	g := graph.New[greeting]().
		AddNode("hello", hello).
		AddEdge(graph.START, "hello").
		AddEdge("hello", graph.END)
	r, err := g.Compile(graph.WithStore(checkpoint.NewMemory()))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := r.Run(context.Background(), "run-1", greeting{Name: "gopher"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Seq, res.State.Message)
	// Output: done 2 hello, gopher
}

type approval struct {
	Plan     string
	Approved bool
}

func ExampleInterrupt() {
	ctx := context.Background()
	review := func(ctx context.Context, s approval) (approval, error) {
		answer, err := graph.Interrupt(ctx, "approve "+s.Plan+"?")
		if err != nil {
			return s, err // the *InterruptError stops the run
		}
		if err := json.Unmarshal(answer, &s.Approved); err != nil {
			return s, err
		}
		return s, nil
	}
	g := graph.New[approval]().
		AddNode("review", review).
		AddEdge(graph.START, "review").
		AddEdge("review", graph.END)
	r, _ := g.Compile(graph.WithStore(checkpoint.NewMemory()))

	res, _ := r.Run(ctx, "run-1", approval{Plan: "plan.md"})
	fmt.Println(res.Status, res.Interrupt.Node, string(res.Interrupt.Payload))

	res, err := r.Resume(ctx, "run-1", graph.WithResume(true))
	fmt.Println(res.Status, res.State.Approved, err)
	// Output:
	// interrupted review "approve plan.md?"
	// done true <nil>
}

func ExampleRunner_Fork() {
	ctx := context.Background()
	inc := func(_ context.Context, n int) (int, error) { return n + 1, nil }
	more := func(_ context.Context, n int) ([]string, error) {
		if n < 3 {
			return []string{"inc"}, nil
		}
		return []string{graph.END}, nil
	}
	g := graph.New[int]().
		AddNode("inc", inc).
		AddEdge(graph.START, "inc").
		AddConditionalEdge("inc", more, "inc", graph.END)
	r, _ := g.Compile(graph.WithStore(checkpoint.NewMemory()))
	_, _ = r.Run(ctx, "a", 0)

	hist, _ := r.History(ctx, "a", 0) // newest first
	for _, h := range hist {
		fmt.Println(h.Seq, h.Step, h.State, h.Next)
	}
	snap, _ := r.Fork(ctx, "a", 2, "b") // from the checkpoint after step 1
	fmt.Println("fork:", snap.RunID, snap.State, snap.Meta[graph.MetaForkOf])
	res, _ := r.Resume(ctx, "b")
	fmt.Println("fork ends with", res.State)
	// Output:
	// 4 3 3 []
	// 3 2 2 [inc]
	// 2 1 1 [inc]
	// 1 0 0 [inc]
	// fork: b 1 a@2
	// fork ends with 3
}

func ExampleWithMerge() {
	type words struct{ List []string }
	say := func(w string) graph.NodeFunc[words] {
		return func(_ context.Context, s words) (words, error) {
			return words{List: append(slices.Clone(s.List), w)}, nil
		}
	}
	both := func(context.Context, words) ([]string, error) { return []string{"left", "right"}, nil }
	// merge appends each branch's new words to the base, in branch order.
	merge := func(_ context.Context, base words, branches []words) (words, error) {
		out := words{List: slices.Clone(base.List)}
		for _, b := range branches {
			out.List = append(out.List, b.List[len(base.List):]...)
		}
		return out, nil
	}
	g := graph.New[words]().
		AddNode("start", say("start")).
		AddNode("left", say("left")).
		AddNode("right", say("right")).
		AddNode("end", say("end")).
		AddEdge(graph.START, "start").
		AddConditionalEdge("start", both, "left", "right").
		AddEdge("left", "end").
		AddEdge("right", "end").
		AddEdge("end", graph.END)
	r, err := g.Compile(graph.WithMerge(merge))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := r.Run(context.Background(), "fan", words{})
	fmt.Println(res.State.List)
	// Output: [start left right end]
}
