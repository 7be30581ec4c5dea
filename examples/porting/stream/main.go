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

func join(s State) State { return State{Results: []string{fmt.Sprint("joined ", len(s.Results))}} }

func main() {
	r := graph.New[State]().
		AddNode("slow", worker("slow", 300*time.Millisecond), graph.Partial()).
		AddNode("fast", worker("fast", 10*time.Millisecond), graph.Partial()).
		AddNode("join", graph.Func(join), graph.Partial()).
		AddPath(graph.START, "slow", "join", graph.END).AddPath(graph.START, "fast", "join").
		MustCompile()
	for u, err := range r.Updates(context.Background(), "thread-1", State{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u.Node, u.State.Results)
	}
}
