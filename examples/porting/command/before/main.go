package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
)

type Doc struct {
	Text  string
	Route string
}

func triage(_ context.Context, s Doc) (graph.Command[Doc], error) {
	next := "publish"
	if strings.Contains(s.Text, "TODO") {
		next = "edit"
	}
	s.Route = "triage -> " + next
	return graph.Command[Doc]{Update: s, Goto: []string{next}}, nil
}

func edit(_ context.Context, s Doc) (Doc, error) {
	s.Text = strings.ReplaceAll(s.Text, "TODO", "done")
	return s, nil
}

func publish(_ context.Context, s Doc) (Doc, error) {
	s.Route += " -> publish"
	return s, nil
}

func main() {
	r, err := graph.New[Doc]().
		AddCommandNode("triage", triage, []string{"edit", "publish"}).
		AddNode("edit", edit).
		AddNode("publish", publish).
		AddEdge(graph.START, "triage").AddEdge("edit", "publish").AddEdge("publish", graph.END).
		Compile()
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{"intro TODO", "final"} {
		res, err := r.Run(context.Background(), text, Doc{Text: text})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.State.Route, "|", res.State.Text)
	}
}
