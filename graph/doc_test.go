package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGraphDocIsCurrent: every Go quote of docs/graph.md's "Coming from
// LangGraph" page is in graph's tests or Examples, which run it, and every
// idiom of the page quotes some. (cli's test of the same name keeps the
// page's Mermaid drawing of the workflow current.)
func TestGraphDocIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../docs/graph.md")
	if err != nil {
		t.Fatal(err)
	}
	_, page, ok := strings.Cut(string(doc), "\n## Coming from LangGraph\n")
	if !ok {
		t.Fatal(`docs/graph.md has no "## Coming from LangGraph" section`)
	}
	page, _, _ = strings.Cut(page, "\n## ")
	files, _ := filepath.Glob("*_test.go")
	var code strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code.WriteString(normalize(string(b)) + "\n")
	}
	idioms := strings.Split(page, "\n### ")[1:]
	if len(idioms) < 8 {
		t.Fatalf("the page has %d idioms", len(idioms))
	}
	quotes := 0
	for _, idiom := range idioms {
		title, _, _ := strings.Cut(idiom, "\n")
		blocks := goBlocks(idiom)
		if len(blocks) == 0 {
			t.Errorf("idiom %q quotes no Go", title)
		}
		for _, b := range blocks {
			quotes++
			if !strings.Contains(code.String(), normalize(b)) {
				t.Errorf("idiom %q quotes Go that no test or Example of graph holds:\n%s", title, b)
			}
		}
	}
	t.Logf("%d idioms, %d Go quotes, each found in graph's tests", len(idioms), quotes)
}

// goBlocks returns the ```go blocks of s.
func goBlocks(s string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(s, "```go\n")
		if !ok {
			return out
		}
		block, after, _ := strings.Cut(rest, "```")
		out = append(out, block)
		s = after
	}
}

// normalize trims every line, collapses runs of spaces and tabs, and drops
// blank lines, so that gofmt's alignment and indentation do not count.
func normalize(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
