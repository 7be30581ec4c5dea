package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
)

type State struct {
	Topic, Subject string
	Subjects       []string
	Jokes          []string `graph:"append"`
	Best           string
}

func topics(s State) State {
	return State{Subjects: []string{s.Topic + " lions", s.Topic + " elephants", s.Topic + " penguins"}}
}

func joke(s State) State {
	return State{Jokes: []string{"Why did the " + s.Subject + " cross the road?"}}
}

func toJokes(s State) graph.Routes[State] {
	return graph.SendEach("joke", s.Subjects, func(sub string) State { return State{Subject: sub} })
}

func pick(s State) State {
	return State{Best: slices.MaxFunc(s.Jokes, func(a, b string) int { return len(a) - len(b) })}
}

func main() {
	r := graph.New[State]().
		AddNode("topics", graph.Func(topics), graph.Partial()).
		AddNode("joke", graph.Func(joke), graph.Partial()).
		AddNode("pick", graph.Func(pick), graph.Partial()).
		AddEdge(graph.START, "topics").AddRoute("topics", graph.Func(toJokes), "joke").
		AddPath("joke", "pick", graph.END).
		MustCompile()
	res, err := r.Run(context.Background(), "jokes", State{Topic: "funny"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(res.State.Jokes, "\n"))
	fmt.Println("best:", res.State.Best)
}
