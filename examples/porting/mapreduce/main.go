package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Topic    string
	Subjects []string
	Subject  string
	Jokes    []string `graph:"append"`
	Best     string
}

func topics(_ context.Context, s State) (State, error) {
	return State{Subjects: []string{s.Topic + " lions", s.Topic + " elephants", s.Topic + " penguins"}}, nil
}

func joke(_ context.Context, s State) (State, error) {
	return State{Jokes: []string{"Why did the " + s.Subject + " cross the road?"}}, nil
}

func toJokes(_ context.Context, s State) (graph.Routes[State], error) {
	return graph.SendEach("joke", s.Subjects, func(sub string) State { return State{Subject: sub} }), nil
}

func pick(_ context.Context, s State) (State, error) {
	return State{Best: slices.MaxFunc(s.Jokes, func(a, b string) int { return cmp.Compare(len(a), len(b)) })}, nil
}

func main() {
	r := graph.New[State]().
		AddNode("topics", topics, graph.Partial()).
		AddNode("joke", joke, graph.Partial()).
		AddNode("pick", pick, graph.Partial()).
		AddEdge(graph.START, "topics").
		AddRoute("topics", toJokes, "joke").
		AddPath("joke", "pick", graph.END).
		MustCompile()
	res, err := r.Run(context.Background(), "jokes", State{Topic: "funny"})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range res.State.Jokes {
		fmt.Println(j)
	}
	fmt.Println("best:", res.State.Best)
}
