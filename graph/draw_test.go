package graph_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
)

// drawnGraph has every kind of edge: static, conditional, send, command,
// a deferred node and a subgraph.
func drawnGraph(t *testing.T) *graph.Runner[trail] {
	child := mustCompile(t, graph.New[trail]().
		AddNode("x", step("x")).AddEdge(graph.START, "x").AddEdge("x", graph.END))
	g := graph.New[trail]().
		AddNode("plan", step("plan")).
		AddCommandNode("pick", func(_ context.Context, s trail) (graph.Command[trail], error) {
			return graph.Command[trail]{Update: s, Goto: []string{"fan"}}, nil
		}, []string{"fan", graph.END}).
		AddNode("fan", step("fan")).
		AddNode("work", step("work")).
		AddNode("join", step("join"), graph.Defer())
	graph.AddSubgraph(g, "review", child, func(p trail) trail { return p }, func(_, c trail) trail { return c })
	g.AddEdge(graph.START, "plan").
		AddConditionalEdge("plan", func(context.Context, trail) ([]string, error) { return []string{"pick"}, nil }, "pick", "review").
		AddSendEdge("fan", func(context.Context, trail) (graph.Routes[trail], error) { return graph.Routes[trail]{}, nil }, "work").
		AddEdge("work", "join").
		AddEdge("review", "join").
		AddEdge("join", graph.END)
	return mustCompile(t, g, graph.WithMerge(mergeTrails))
}

// TestMermaid checks the drawing LangGraph's draw_mermaid makes of a graph
// (https://langchain-ai.github.io/langgraph/how-tos/visualization/): nodes,
// solid static edges, dotted conditional ones with their targets, and a
// subgraph drawn inside its node.
func TestMermaid(t *testing.T) {
	want := `flowchart TD
	__start__([start])
	plan[plan]
	pick[pick]
	fan[fan]
	work[work]
	join["join (deferred)"]
	subgraph review [review]
		review____start__([start])
		review__x[x]
		review____end__([end])
		review____start__ --> review__x
		review__x --> review____end__
	end
	__end__([end])
	__start__ --> plan
	work --> join
	join --> __end__
	review____end__ --> join
	plan -.-> pick
	plan -.-> review____start__
	pick -. goto .-> fan
	pick -. goto .-> __end__
	fan -. send .-> work
`
	if got := drawnGraph(t).Mermaid(); got != want {
		t.Errorf("Mermaid:\n%s\nwant:\n%s", got, want)
	}
}

// TestDOT checks the DOT drawing; when Graphviz is installed, dot must
// accept it.
func TestDOT(t *testing.T) {
	got := drawnGraph(t).DOT()
	for _, want := range []string{
		"digraph G {",
		"\tsubgraph \"cluster_review\" {\n\t\tlabel=\"review\";\n",
		"\t\t\"review/x\" [label=\"x\", shape=box];\n",
		"\t\"plan\" -> \"review/__start__\" [style=dashed];\n",
		"\t\"review/__end__\" -> \"join\";\n",
		"\t\"fan\" -> \"work\" [style=dashed, label=\"send\"];\n",
		"\t\"join\" [label=\"join (deferred)\", shape=box, style=dotted];\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("DOT lacks %q:\n%s", want, got)
		}
	}
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Log("Graphviz not installed: the DOT text is not checked by dot")
		return
	}
	cmd := exec.Command(dot, "-Tsvg", "-o", os.DevNull)
	cmd.Stdin = strings.NewReader(got)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dot rejects the drawing: %v\n%s", err, out)
	}
}
