package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Results []string
}

func worker(name string, d time.Duration) graph.NodeFunc[State] {
	return func(_ context.Context, s State) (State, error) {
		time.Sleep(d)
		return State{Results: append(slices.Clone(s.Results), name)}, nil
	}
}

func join(_ context.Context, s State) (State, error) {
	return State{Results: append(slices.Clone(s.Results), fmt.Sprint("joined ", len(s.Results)))}, nil
}

func merge(_ context.Context, base State, branches []State) (State, error) {
	out := State{Results: slices.Clone(base.Results)}
	for _, b := range branches {
		out.Results = append(out.Results, b.Results[len(base.Results):]...)
	}
	return out, nil
}

func main() {
	r, err := graph.New[State]().
		AddNode("slow", worker("slow", 300*time.Millisecond)).
		AddNode("fast", worker("fast", 10*time.Millisecond)).
		AddNode("join", join).
		AddEdge(graph.START, "slow").AddEdge(graph.START, "fast").
		AddEdge("slow", "join").AddEdge("fast", "join").AddEdge("join", graph.END).
		Compile(graph.WithMerge(merge))
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range r.Stream(context.Background(), "thread-1", State{}, graph.StreamUpdates) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Kind == graph.NodeUpdate {
			res := ev.Payload.(State).Results // the whole state: print what the node added
			fmt.Println(ev.Node, res[len(res)-1:])
		}
	}
}
