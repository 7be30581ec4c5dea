package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Results []string `graph:"append"`
}

func worker(name string, d time.Duration) graph.NodeFunc[State] {
	return func(context.Context, State) (State, error) {
		time.Sleep(d)
		return State{Results: []string{name}}, nil
	}
}

func join(_ context.Context, s State) (State, error) {
	return State{Results: []string{fmt.Sprint("joined ", len(s.Results))}}, nil
}

func main() {
	r, err := graph.New[State]().
		AddNode("slow", worker("slow", 300*time.Millisecond), graph.Partial()).
		AddNode("fast", worker("fast", 10*time.Millisecond), graph.Partial()).
		AddNode("join", join, graph.Partial()).
		AddEdge(graph.START, "slow").AddEdge(graph.START, "fast").
		AddEdge("slow", "join").AddEdge("fast", "join").AddEdge("join", graph.END).
		Compile()
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range r.Stream(context.Background(), "thread-1", State{}, graph.StreamUpdates) {
		if err != nil {
			log.Fatal(err)
		}
		if s, ok := graph.StateOf[State](ev); ok {
			fmt.Println(ev.Node, s.Results)
		}
	}
}
