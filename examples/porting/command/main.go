package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
)

type Doc struct{ Text, Route string }

func triage(_ context.Context, s Doc) (graph.Command[Doc], error) {
	next := "publish"
	if strings.Contains(s.Text, "TODO") {
		next = "edit"
	}
	return graph.Command[Doc]{Update: Doc{Route: "triage -> " + next}, Goto: []string{next}}, nil
}

func edit(_ context.Context, s Doc) (Doc, error) {
	return Doc{Text: strings.ReplaceAll(s.Text, "TODO", "done")}, nil
}

func publish(_ context.Context, s Doc) (Doc, error) {
	return Doc{Route: s.Route + " -> publish"}, nil
}

func main() {
	r := graph.New[Doc]().
		AddCommandNode("triage", triage, []string{"edit", "publish"}, graph.Partial()).
		AddNode("edit", edit, graph.Partial()).
		AddNode("publish", publish, graph.Partial()).
		AddEdge(graph.START, "triage").AddPath("edit", "publish", graph.END).
		MustCompile()
	for _, text := range []string{"intro TODO", "final"} {
		res, err := r.Run(context.Background(), text, Doc{Text: text})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.State.Route, "|", res.State.Text)
	}
}
