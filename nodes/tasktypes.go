package nodes

import (
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// developerRules is what a developer is told to do for each task type
// (seeds 000 and 002: a test subtask's tests "fail (expected — no impl
// yet)"; an impl makes them pass; a refactor keeps behaviour).
var developerRules = map[state.TaskType]string{
	state.TypeTest: "a test task writes tests that compile where the language allows and FAIL for the missing " +
		"behaviour: that failure is the expected result, not a failure of the task. Do not write the " +
		"implementation, stubs that make them pass, or skips around them; report which tests fail and why.",
	state.TypeImpl: "an impl task makes the tests its task names (or the test task it depends on wrote) " +
		"pass without changing, weakening or skipping them; write the least code that does it, then run them.",
	state.TypeRefactor: "a refactor task changes structure only: behaviour and tests stay as they are, and " +
		"the tests that passed before still pass.",
}

// reviewerRules is how a reviewer judges each task type (seed 002: the
// reviewer "checks test quality, not test passage" for test subtasks).
var reviewerRules = map[state.TaskType]string{
	state.TypeTest: "a test task is judged on the quality of its tests, not on their passing: they must " +
		"compile where the language allows and fail for the missing behaviour. Failing tests are expected " +
		"here; reject an implementation written early, or tests that pass already or test nothing.",
	state.TypeImpl: "an impl task must make the named tests pass without changing, weakening or skipping " +
		"them: run them, and reject any edit to those tests.",
	state.TypeRefactor: "a refactor task must leave behaviour and tests unchanged: run the tests, and reject " +
		"a changed test or a change of behaviour.",
}

// typeOrder is the order in which the rules of the types are listed.
var typeOrder = []state.TaskType{state.TypeTest, state.TypeImpl, state.TypeRefactor}

// typeRules lists rules' entries for the types of tasks (each once, in
// typeOrder), each naming its tasks: "- Task 1 (test): ...". It is empty
// when no task has a type (a task-mode plan).
func typeRules(rules map[state.TaskType]string, tasks []state.Task) string {
	var b strings.Builder
	for _, typ := range typeOrder {
		var ids []string
		for _, t := range tasks {
			if t.Type == typ {
				ids = append(ids, t.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		word := "Task"
		if len(ids) > 1 {
			word = "Tasks"
		}
		fmt.Fprintf(&b, "- %s %s (%s): %s\n", word, strings.Join(ids, ", "), typ, rules[typ])
	}
	return b.String()
}

// developerTypeRules is the developer prompt's section on its tasks'
// types, or "" when they have none.
func developerTypeRules(tasks []state.Task) string {
	r := typeRules(developerRules, tasks)
	if r == "" {
		return ""
	}
	return "\n## How to do each task, by its type\n\n" + r
}

// reviewerTypeRules is the reviewer prompt's section on the phase's task
// types, or the untyped rule when they have none.
func reviewerTypeRules(tasks []state.Task) string {
	r := typeRules(reviewerRules, tasks)
	if r == "" {
		return "Run the tests if you can.\n"
	}
	return "Judge each task by its type:\n" + r
}

// architectTDD is the architect's part of seed 000's TDD ordering: the
// five points a typed plan keeps.
const architectTDD = `When you give tasks types, keep to test-driven order:
1. test tasks come first;
2. each impl task depends on the test task that tests it;
3. the tests fail first: a test task writes no implementation;
4. the implementation is minimal: what makes its tests pass;
5. a refactor task is optional, after its impl, and changes no behaviour.
`
