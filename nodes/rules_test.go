package nodes

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

func TestNothingToAct(t *testing.T) {
	item := func(v state.Verdict) state.ReviewItem { return state.ReviewItem{Text: "x", Verdict: v} }
	for _, c := range []struct {
		name     string
		reviewer int
		rr       state.ReviewResult
		want     bool
	}{
		{"one deferred", 1, state.ReviewResult{Items: []state.ReviewItem{item(state.VerdictDefer)}}, true},
		{"deferred and rejected", 2, state.ReviewResult{Items: []state.ReviewItem{item(state.VerdictDefer), item(state.VerdictReject)}}, true},
		{"all filtered out", 2, state.ReviewResult{}, true},
		{"one to implement", 2, state.ReviewResult{Items: []state.ReviewItem{item(state.VerdictDefer), item(state.VerdictImplement)}}, false},
		{"no verdict is to implement", 1, state.ReviewResult{Items: []state.ReviewItem{item("")}}, false},
		{"comments only", 0, state.ReviewResult{Comments: "the tests do not compile"}, false},
		{"approved", 1, state.ReviewResult{Approved: true, Items: []state.ReviewItem{item(state.VerdictDefer)}}, false},
	} {
		if got := nothingToAct(c.reviewer, c.rr); got != c.want {
			t.Errorf("%s: nothingToAct = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTypeRulesNameEachTypesTasksOnce(t *testing.T) {
	tasks := []state.Task{{ID: "1", Type: state.TypeTest}, {ID: "2", Type: state.TypeImpl}, {ID: "3", Type: state.TypeTest}}
	got := developerTypeRules(tasks)
	if !strings.Contains(got, "- Tasks 1, 3 (test): a test task writes tests") || !strings.Contains(got, "- Task 2 (impl): an impl task") ||
		strings.Contains(got, "refactor task") {
		t.Errorf("developer's rules:\n%s", got)
	}
	if got := developerTypeRules([]state.Task{{ID: "1"}}); got != "" {
		t.Errorf("an untyped task got rules:\n%s", got)
	}
	if got := reviewerTypeRules([]state.Task{{ID: "1"}}); got != "Run the tests if you can.\n" {
		t.Errorf("an untyped phase's review rule = %q", got)
	}
}
