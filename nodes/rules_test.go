package nodes

import (
	"slices"
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

func TestCheckDeclared(t *testing.T) {
	tasks := []state.Task{{ID: "1", Files: []string{"calc.go", "./internal/", "cmd/*.go"}}, {ID: "2", Files: []string{"calc_test.go", "calc.go"}}}
	c := CheckDeclared(tasks, []string{"calc.go", "cmd/main.go", "internal/x/y.go", "notes.txt", "z.go"})
	if !slices.Equal(c.Undeclared, []string{"notes.txt", "z.go"}) || !slices.Equal(c.Untouched, []string{"calc_test.go"}) {
		t.Fatalf("CheckDeclared = %+v", c)
	}
	if c := CheckDeclared([]state.Task{{ID: "1"}}, []string{"anything.go"}); !c.Empty() {
		t.Fatalf("tasks that declare nothing are held to %+v", c)
	}
	if c := CheckDeclared(tasks[:1], []string{"calc.go", "cmd/a.go", "internal/b"}); !c.Empty() {
		t.Fatalf("a session within its files: %+v", c)
	}
}

func TestReviewerPromptNamesTheDeclaredFilesDifferences(t *testing.T) {
	plan, err := state.ParsePlan("p.md", "### Task 1: t\n- type: test\n- depends on: none\n- files: a_test.go\n")
	if err != nil {
		t.Fatal(err)
	}
	s := state.ExecutionState{}.WithPlan(plan)
	ps := s.Progress.Phases[0]
	ps.Written = map[string]string{"b.go": "x"}
	if s, err = s.WithPhaseState(ps); err != nil {
		t.Fatal(err)
	}
	p, err := ReviewerPrompt(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, "- changed, but no task declares them: b.go\n") || !strings.Contains(p, "- declared, but not created or changed: a_test.go\n") ||
		!strings.Contains(p, "judged on the quality of its tests") {
		t.Fatalf("reviewer prompt:\n%s", p)
	}
}

// Item 4 in a phase of several lanes: each lane is checked against its
// own tasks' declared files, and under strict_files the lane that wrote
// an undeclared file fails the phase's attempt with the list.
func TestStrictFilesChecksEachLane(t *testing.T) {
	script := strings.Replace(laneScript, `      - write: {path: bye.txt, content: "bye\n"}`,
		`      - write: {path: bye.txt, content: "bye\n"}
      - write: {path: extra.txt, content: "not declared\n"}`, 1)
	h := newHarness(t, script)
	res, err := h.start(lanePlan, state.RunConfig{AutoApprove: true, Parallel: 2, StrictFiles: true})
	s := mustDone(t, res, err, state.RunHalted)
	msg := strings.Join(s.Errors, "\n")
	if !strings.Contains(msg, "strict_files") || !strings.Contains(msg, "changed files no task declares: extra.txt") || !strings.Contains(msg, "Lane 2") {
		t.Fatalf("halt: %s", msg)
	}
	if strings.Contains(msg, "Lane 1 ") || strings.Contains(msg, "Lane 3 ") {
		t.Fatalf("lanes that kept to their files failed too: %s", msg)
	}
}
