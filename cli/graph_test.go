package cli

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestGraphPrintsTheWorkflow: `gaffer graph` draws the workflow's nodes
// and its routers' targets; DOT on request; an unknown format is a usage
// error (exit 2) that names the choices.
func TestGraphPrintsTheWorkflow(t *testing.T) {
	var out strings.Builder
	if err := Graph(&out, GraphOptions{Format: "mermaid"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"flowchart TD", "\tarchitect[architect]", "\treview -.-> recover", "\tapproval -.-> phased_execution", "\t__start__([start])"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("mermaid output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Graph(&out, GraphOptions{Format: "dot"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "digraph G {") || !strings.Contains(out.String(), `"review" -> "recover" [style=dashed];`) {
		t.Errorf("dot output:\n%s", out.String())
	}
	err := Graph(&out, GraphOptions{Format: "png"})
	if !errors.Is(err, ErrUsage) || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "use mermaid or dot") {
		t.Fatalf("Graph(png) = %v (exit %d)", err, ExitCode(err))
	}
}

// TestGraphDocIsCurrent: the Mermaid block of docs/graph.md is what
// `gaffer graph` prints today.
func TestGraphDocIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../docs/graph.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```mermaid\n")
	if !ok {
		t.Fatal("docs/graph.md has no mermaid block")
	}
	block, _, _ = strings.Cut(block, "```")
	var out strings.Builder
	if err := Graph(&out, GraphOptions{Format: "mermaid"}); err != nil {
		t.Fatal(err)
	}
	if block != out.String() {
		t.Errorf("docs/graph.md is out of date; paste the output of `gaffer graph`:\n%s", out.String())
	}
}
