package nodes

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// taskFail is a task-mode developer step (task 1, one review iteration)
// whose go test fails the same way, bar the line number and temp dir.
func taskFail(iteration int, line, dir string) string {
	return `
  - phase: 1
    iteration: ` + itoa(iteration) + `
    actions:
      - write: {path: impl.txt, content: "try ` + itoa(iteration) + `\n"}
      - run: 'printf -- "--- FAIL: TestEval (0.00s)\n    eval_test.go:` + line + `: Eval(\"1 + 2\") = 4, want 3 (fixture ` + dir + `/in.txt)\nFAIL\nFAIL\texample.com/calc\t0.004s\n" >&2; exit 1'`
}

// Torture: in task mode a rejected task goes back to the same session,
// so a task failing the same way at every review iteration never used to
// reach a second "attempt": recovery recorded one failure at the fifth
// rejection and stopped with "no recovery left", having tried nothing.
// Each rejected review iteration is a failed try of the task: the
// repeated failure is replanned, and the next iteration carries the
// revised approach.
func TestRecoveryTaskModeReviewIterationsCountAsFailures(t *testing.T) {
	// The same failure at iterations 1 and 2; after the replan,
	// iteration 3 does the task.
	h := newHarness(t, `
developer:`+taskFail(1, "12", "/tmp/go-build111")+taskFail(2, "57", "/tmp/go-build999")+`
  - phase: 1
    iteration: 3
    actions:
      - write: {path: impl.txt, content: "good\n"}`+taskFail(4, "14", "/tmp/go-build4")+taskFail(5, "15", "/tmp/go-build5")+`
  - phase: 2
    actions:
      - write: {path: two.txt, content: "two\n"}
replanner:
  - phase: 1
    answer: '{"approach":"compute the sum with an explicit loop over the operands and check it against the table test","tasks":[{"id":"1","title":"one"}]}'
`)
	res, err := h.start(taskPlan, on())
	s := mustDone(t, res, err, state.RunCompleted)
	rs := recoveryOf(t, s)
	if rs.Memory.Replans != 1 || rs.Memory.Phase(0).Attempts < 2 {
		t.Fatalf("memory %+v, last decision %+v", rs.Memory, rs.Last)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	var third *agent.Session
	for k := range devs {
		if devs[k].Phase == 1 && devs[k].Iteration == 3 {
			third = &devs[k]
		}
	}
	if third == nil || !strings.Contains(third.Prompt, "explicit loop over the operands") {
		t.Fatalf("iteration 3 does not carry the revised approach: %+v", third)
	}
}

// Torture: a run with no replanner (its script has no replanner entries)
// whose phase is stuck after two failures must not record "stuck:replan"
// and then halt: the decision it shows is the one it carried out.
func TestRecoveryStuckWithoutReplannerSaysStop(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "the parser rejects the input")+failN(2, 2, "a different failure, somewhere else in the evaluator entirely")+"\n")
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunHalted)
	rs := recoveryOf(t, s)
	if rs.Last == nil || rs.Last.Decision != "stuck:stop" {
		t.Fatalf("a halted run's last decision is %+v", rs.Last)
	}
}
