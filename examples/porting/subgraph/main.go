package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Draft    string
	Approved bool
	Log      []string `graph:"append"`
}

func note(text string) graph.NodeFunc[State] {
	return func(_ context.Context, s State) (State, error) {
		return State{Log: []string{text + " " + s.Draft}}, nil
	}
}

func ask(ctx context.Context, s State) (State, error) {
	ok, err := graph.Ask[bool](ctx, "approve "+s.Draft+"?")
	return State{Approved: ok, Log: []string{fmt.Sprint("approved: ", ok)}}, err
}

func write(_ context.Context, s State) (State, error) {
	return State{Draft: "post v1", Log: []string{"wrote post v1"}}, nil
}

func main() {
	review, err := graph.New[State]().
		AddNode("check", note("checked"), graph.Partial()).
		AddNode("ask", ask, graph.Partial()).
		AddEdge(graph.START, "check").AddEdge("check", "ask").AddEdge("ask", graph.END).
		Compile()
	if err != nil {
		log.Fatal(err)
	}
	r, err := graph.New[State]().
		AddNode("write", write, graph.Partial()).
		AddSubgraph("review", review).
		AddNode("publish", note("published"), graph.Partial()).
		AddEdge(graph.START, "write").AddEdge("write", "review").
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
