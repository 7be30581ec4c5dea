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
	Jokes    []string
	Best     string
}

func topics(_ context.Context, s State) (State, error) {
	s.Subjects = []string{s.Topic + " lions", s.Topic + " elephants", s.Topic + " penguins"}
	return s, nil
}

func joke(_ context.Context, s State) (State, error) {
	return State{Jokes: []string{"Why did the " + s.Subject + " cross the road?"}}, nil
}

func toJokes(_ context.Context, s State) (graph.Routes[State], error) {
	var r graph.Routes[State]
	for _, sub := range s.Subjects {
		r.Sends = append(r.Sends, graph.Send[State]{Node: "joke", Input: State{Subject: sub}})
	}
	return r, nil
}

func merge(_ context.Context, base State, branches []State) (State, error) {
	base.Jokes = slices.Clone(base.Jokes)
	for _, b := range branches {
		base.Jokes = append(base.Jokes, b.Jokes...)
	}
	return base, nil
}

func pick(_ context.Context, s State) (State, error) {
	s.Best = slices.MaxFunc(s.Jokes, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	return s, nil
}

func main() {
	r, err := graph.New[State]().
		AddNode("topics", topics).
		AddNode("joke", joke).
		AddNode("pick", pick).
		AddEdge(graph.START, "topics").
		AddSendEdge("topics", toJokes, "joke").
		AddEdge("joke", "pick").
		AddEdge("pick", graph.END).
		Compile(graph.WithMerge(merge))
	if err != nil {
		log.Fatal(err)
	}
	res, err := r.Run(context.Background(), "jokes", State{Topic: "funny"})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range res.State.Jokes {
		fmt.Println(j)
	}
	fmt.Println("best:", res.State.Best)
}
