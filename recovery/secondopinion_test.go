package recovery

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// Only a revision that rewrites the tasks is put to the reviewer model:
// the anchor's own tasks with a new approach are not, white space and
// the order of files aside.
func TestRewritesTasks(t *testing.T) {
	a, err := FreezeAnchor(samplePlan(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	same := asTasks(a)
	same[0].Description = "  Parse hours and minutes;\nreject unknown units with an error naming them. "
	same[0].Files = []string{"parse/units.go", "./parse/duration.go"}
	if RewritesTasks(a, same) {
		t.Error("the anchor's tasks, reflowed, count as a rewrite")
	}
	for name, edit := range map[string]func([]state.Task) []state.Task{
		"a body reworded": func(ts []state.Task) []state.Task { ts[0].Description = "Parse hours, minutes and seconds."; return ts },
		"a split": func(ts []state.Task) []state.Task {
			b := ts[0]
			b.ID = "2b"
			return append(ts, b)
		},
		"a file swapped": func(ts []state.Task) []state.Task {
			ts[0].Files = []string{"parse/duration.go", "parse/scan.go"}
			return ts
		},
	} {
		if !RewritesTasks(a, edit(asTasks(a))) {
			t.Errorf("%s is not a rewrite", name)
		}
	}
	p := SecondOpinionPrompt(a, same, "Use a unit table.")
	for _, want := range []string{"<goal-anchor>\n" + a.Text() + "</goal-anchor>", "Approach: Use a unit table.", "### Task 2: ParseDuration", `"approved"`, `"comments"`} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
}
