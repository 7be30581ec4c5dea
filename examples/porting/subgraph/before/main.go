package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"slices"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Draft    string
	Approved bool
	Log      []string
}

func note(text string) graph.NodeFunc[State] {
	return func(_ context.Context, s State) (State, error) {
		s.Log = append(slices.Clone(s.Log), text+" "+s.Draft)
		return s, nil
	}
}

func ask(ctx context.Context, s State) (State, error) {
	raw, err := graph.Interrupt(ctx, "approve "+s.Draft+"?")
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(raw, &s.Approved); err != nil {
		return s, err
	}
	s.Log = append(slices.Clone(s.Log), fmt.Sprint("approved: ", s.Approved))
	return s, nil
}

func write(_ context.Context, s State) (State, error) {
	s.Draft = "post v1"
	s.Log = append(slices.Clone(s.Log), "wrote post v1")
	return s, nil
}

func main() {
	review, err := graph.New[State]().
		AddNode("check", note("checked")).
		AddNode("ask", ask).
		AddEdge(graph.START, "check").AddEdge("check", "ask").AddEdge("ask", graph.END).
		Compile()
	if err != nil {
		log.Fatal(err)
	}
	g := graph.New[State]().
		AddNode("write", write).
		AddNode("publish", note("published"))
	graph.AddSubgraph(g, "review", review,
		func(s State) State { return s },
		func(_ State, c State) State { return c })
	r, err := g.AddEdge(graph.START, "write").AddEdge("write", "review").
		AddEdge("review", "publish").AddEdge("publish", graph.END).
		Compile(graph.WithStore(checkpoint.NewMemory()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := r.Run(ctx, "thread-1", State{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("waiting:", string(res.Interrupt.Payload))
	res, err = r.Resume(ctx, "thread-1", graph.WithResume(true))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range res.State.Log {
		fmt.Println(l)
	}
}
