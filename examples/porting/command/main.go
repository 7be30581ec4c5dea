package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
)

type Doc struct{ Text, Route string }

func triage(s Doc) graph.Command[Doc] {
	next := "publish"
	if strings.Contains(s.Text, "TODO") {
		next = "edit"
	}
	return graph.Command[Doc]{Update: Doc{Route: "triage -> " + next}, Goto: []string{next}}
}

func edit(s Doc) Doc    { return Doc{Text: strings.ReplaceAll(s.Text, "TODO", "done")} }
func publish(s Doc) Doc { return Doc{Route: s.Route + " -> publish"} }

func main() {
	r := graph.New[Doc]().
		AddCommandNode("triage", graph.Func(triage), []string{"edit", "publish"}, graph.Partial()).
		AddNode("edit", graph.Func(edit), graph.Partial()).
		AddNode("publish", graph.Func(publish), graph.Partial()).
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
