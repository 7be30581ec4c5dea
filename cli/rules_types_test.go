package cli

import (
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

// typedPlan is a test, an impl and a refactor task, one per phase.
const typedPlan = `# Plan: a greeting, test first

### Task 1: Write the test for Greet
- type: test
- depends on: none
- files: greet_test.go

TestGreet checks Greet("Ada") == "hello, Ada".

### Task 2: Implement Greet
- type: impl
- depends on: 1
- files: greet.go

Make TestGreet pass.

### Task 3: Tidy Greet
- type: refactor
- depends on: 2
- files: greet.go

Name the greeting.
`

// typedModel answers the typed plan's roles and keeps every request.
type typedModel struct {
	mu   sync.Mutex
	reqs []fakellm.Request
}

func (m *typedModel) respond(r fakellm.Request) fakellm.Turn {
	m.mu.Lock()
	m.reqs = append(m.reqs, r)
	m.mu.Unlock()
	done := fakellm.Turn{Text: "Done.", Input: 100, Output: 10}
	switch {
	case strings.Contains(r.System, "architect agent"):
		return fakellm.Turn{Text: typedPlan, Input: 100, Output: 10}
	case strings.Contains(r.System, "reviewer agent"):
		return fakellm.Turn{Text: `{"approved": true, "comments": "right"}`, Input: 100, Output: 10}
	case strings.Contains(r.System, "developer agent") && r.SinceUser == 0:
		write := func(path, content string) fakellm.Turn {
			return fakellm.Turn{Calls: []fakellm.Call{{Name: "write_file", Args: jsonArgs("path", path, "content", content)}}, Input: 100, Output: 10}
		}
		switch {
		case strings.Contains(r.FirstUser, "Execute phase 1 of"):
			return write("greet_test.go", greetTest)
		case strings.Contains(r.FirstUser, "Execute phase 2 of"):
			return write("greet.go", greetImpl)
		default:
			return write("greet.go", strings.Replace(greetImpl, `"hello, "`, `greeting`, 1)+"\nconst greeting = \"hello, \"\n")
		}
	case strings.Contains(r.System, "developer agent"):
		return done
	}
	return fakellm.Turn{Status: 400, Text: "unknown role: " + r.System}
}

// Issue 37 item 1: every role is told what each task type asks of it. The
// architect's request carries the five TDD points; each phase's developer
// and reviewer requests carry the rule of that phase's type and no other
// type's; the developer's and reviewer's system prompts say what the types
// mean.
func TestRunLLMPromptsCarryEachTaskTypesRules(t *testing.T) {
	t.Parallel()
	m := &typedModel{}
	srv := fakellm.NewOpenAIFunc(m.respond)
	defer srv.Close()
	dir := greetRepo(t, map[string]string{"gaffer.yaml": strings.Replace(llmProfile("openai", srv.BaseURL(), "GAFFER_TEST_TYPES_KEY"), "tdd: false", "tdd: true", 1)})
	env := map[string]string{"GAFFER_TEST_TYPES_KEY": "sk-test-types"}
	if out, code := gafferEnv(t, env, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	// What each role's first request of each phase must and must not say.
	rules := map[string]map[string]string{
		"developer": {
			"test":     "FAIL for the missing behaviour",
			"impl":     "pass without changing, weakening or skipping them; write the least code",
			"refactor": "a refactor task changes structure only",
		},
		"reviewer": {
			"test":     "judged on the quality of its tests, not on their passing",
			"impl":     "reject any edit to those tests",
			"refactor": "reject a changed test or a change of behaviour",
		},
	}
	phaseType := map[string]string{"Execute phase 1 of": "test", "Execute phase 2 of": "impl", "Execute phase 3 of": "refactor"}
	reviewType := map[string]string{"changes of phase 1 ": "test", "changes of phase 2 ": "impl", "changes of phase 3 ": "refactor"}
	seen := map[string]bool{}
	architect := false
	for _, r := range m.reqs {
		switch {
		case strings.Contains(r.System, "architect agent"):
			architect = true
			for _, p := range []string{"test tasks come first", "each impl task depends on the test task", "the tests fail first",
				"the implementation is minimal", "a refactor task is optional"} {
				if !strings.Contains(r.FirstUser, p) {
					t.Errorf("the architect's prompt lacks the TDD point %q:\n%s", p, r.FirstUser)
				}
			}
			continue
		case r.SinceUser != 0:
			continue
		}
		role, marks := "developer", phaseType
		if strings.Contains(r.System, "reviewer agent") {
			role, marks = "reviewer", reviewType
		}
		if !strings.Contains(r.System, "A test task writes tests that fail for the missing behaviour") {
			t.Errorf("the %s's system prompt does not say what a test task is:\n%s", role, r.System)
		}
		for mark, typ := range marks {
			if !strings.Contains(r.FirstUser, mark) {
				continue
			}
			seen[role+" "+typ] = true
			for other, rule := range rules[role] {
				if has := strings.Contains(r.FirstUser, rule); has != (other == typ) {
					t.Errorf("the %s's prompt for a %s task: has the %s rule = %v\n%s", role, typ, other, has, r.FirstUser)
				}
			}
		}
	}
	if !architect || len(seen) != 6 {
		t.Fatalf("requests seen: architect %v, %v; want the developer and the reviewer of each of the three types", architect, seen)
	}
}
