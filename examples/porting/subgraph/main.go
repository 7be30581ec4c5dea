package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Draft    string
	Approved bool
	Log      []string `graph:"append"`
}

func note(text string) func(State) State {
	return func(s State) State { return State{Log: []string{text + " " + s.Draft}} }
}

func ask(ctx context.Context, s State) (State, error) {
	ok, err := graph.Ask[bool](ctx, "approve "+s.Draft+"?")
	return State{Approved: ok, Log: []string{fmt.Sprint("approved: ", ok)}}, err
}

func write(State) State { return State{Draft: "post v1", Log: []string{"wrote post v1"}} }

func main() {
	review := graph.New[State]().
		AddNode("check", graph.Func(note("checked")), graph.Partial()).
		AddNode("ask", ask, graph.Partial()).
		AddPath(graph.START, "check", "ask", graph.END).
		MustCompile()
	r := graph.New[State]().
		AddNode("write", graph.Func(write), graph.Partial()).
		AddSubgraph("review", review).
		AddNode("publish", graph.Func(note("published")), graph.Partial()).
		AddPath(graph.START, "write", "review", "publish", graph.END).
		MustCompile(graph.WithMemoryStore())
	res, err := r.RunAnswering(context.Background(), "thread-1", State{}, func(i *graph.PendingInterrupt) (any, error) {
		fmt.Println("waiting:", string(i.Payload))
		return true, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(res.State.Log, "\n"))
}
