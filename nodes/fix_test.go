package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// testCommands runs the Doctor's commands as package profile does: an
// agent.Toolbox on the run's tree, confined where the kernel allows.
func testCommands(ctx context.Context, _ state.RunConfig, dir, command string) (agent.CommandResult, error) {
	tb, err := agent.NewToolbox(dir, agent.ToolboxOptions{})
	if err != nil {
		return agent.CommandResult{}, err
	}
	defer tb.Close()
	return tb.Run(ctx, command, nil)
}

// fixCommand writes fixed.txt, counts its runs in the git directory
// (which no reset touches) and says so.
const fixCommand = `echo fixed > fixed.txt; echo run >> .git/fix-runs; echo the fix ran`

const fixAnswer = `'{"action":"execute_fix","confidence":0.9,"category":"build_error","rationale":"a generated file is missing","command":"` + fixCommand + `"}'`

// failsPhase2Twice is phase 1 done and phase 2's first two attempts
// failing, differently (no replan): the Doctor's turn comes next.
var failsPhase2Twice = phase1OK + failN(2, 1, "./eval.go:3:9: undefined: parseOperand") +
	failN(2, 2, "zz_generated.go: no such file or directory") + "\n"

// fixScript fails phase 2 twice, differently (no replan); the Doctor
// advises execute_fix; attempt 3 succeeds only if fixed.txt is there.
var fixScript = failsPhase2Twice + `
  - phase: 2
    attempt: 3
    actions:
      - run: 'cat fixed.txt'
      - write: {path: impl.txt, content: "good 2\n"}` + phase3OK + `
doctor:
  - phase: 2
    answer: ` + fixAnswer + `
`

// fixRuns counts the runs of fixCommand in h's repository.
func fixRuns(t *testing.T, h *harness) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, ".git", "fix-runs"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run\n")
}

// decisions lists run s's decision records' names, in order.
func decisions(t *testing.T, h *harness, s state.ExecutionState) string {
	t.Helper()
	rs := recoveryOf(t, s)
	var out []string
	for n := 1; n <= rs.Decisions; n++ {
		out = append(out, readDecision(t, h, s, n).Decision)
	}
	return strings.Join(out, " ")
}

// The Doctor's execute_fix: its command runs once, at the start of the
// retry (after the reset, before the developer's session), its effect
// is in the retry's tree and committed with the phase, and its output
// is in the retry's prompt and the decision record.
func TestRecoveryDoctorExecuteFixRunsBeforeTheRetry(t *testing.T) {
	h := newHarness(t, fixScript)
	res, err := h.start(chainPlan(3), on())
	s := mustDone(t, res, err, state.RunCompleted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || !strings.Contains(docs[0].Prompt, `| "execute_fix"`) || !strings.Contains(docs[0].Prompt, "At most 1 per phase") {
		t.Fatalf("%d Doctor sessions; the prompt does not offer execute_fix:\n%s", len(docs), docs[0].Prompt)
	}
	if n := fixRuns(t, h); n != 1 {
		t.Fatalf("the fix ran %d times, want 1", n)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	var retry string
	for _, d := range devs {
		if d.Phase == 2 && d.Attempt == 3 {
			retry = d.Prompt
		}
		if d.Phase == 2 && d.Attempt < 3 && strings.Contains(d.Prompt, "The Doctor's fix") {
			t.Fatalf("attempt %d's prompt names a fix not yet granted", d.Attempt)
		}
	}
	if !strings.Contains(retry, "## The Doctor's fix") || !strings.Contains(retry, "the fix ran") || !strings.Contains(retry, "(exit 0)") {
		t.Fatalf("the retry's prompt does not carry the fix's output:\n%s", retry)
	}
	if got := decisions(t, h, s); !strings.Contains(got, "doctor:execute_fix execute_fix execute_fix:ran") {
		t.Fatalf("decisions %q", got)
	}
	rs := recoveryOf(t, s)
	if rs.Fix == nil || !rs.Fix.Ran || rs.Fix.ExitCode != 0 || rs.Fix.Phase != 1 || rs.Memory.Phase(1).Fixes != 1 {
		t.Fatalf("fix state %+v, fixes %d", rs.Fix, rs.Memory.Phase(1).Fixes)
	}
	ran := readDecision(t, h, s, rs.Fix.Decision+1)
	if ran.Decision != "execute_fix:ran" || ran.Attempt != 3 || !strings.Contains(ran.Why, "exit 0\nthe fix ran") {
		t.Fatalf("decision record %+v", ran)
	}
	if out := h.git("show", "HEAD~1:fixed.txt"); strings.TrimSpace(out) != "fixed" {
		t.Fatalf("phase 2's commit has fixed.txt %q", out)
	}
}

// max_execute_fix_per_phase (1): the Doctor's second execute_fix in the
// phase is refused, recorded as execute_fix:refused, and recovery goes
// on as with no advice: the phase, its attempts used, stops.
func TestRecoveryExecuteFixCapRefusesASecond(t *testing.T) {
	h := newHarness(t, failsPhase2Twice+`
  - phase: 2
    attempt: 3
    actions:
      - run: 'echo "the fix did not help: tests time out" >&2; exit 1'
doctor:
  - phase: 2
    answer: `+fixAnswer+`
`)
	res, err := h.start(chainPlan(3), on())
	s := mustDone(t, res, err, state.RunHalted)
	if n := fixRuns(t, h); n != 1 {
		t.Fatalf("the fix ran %d times, want 1", n)
	}
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 2 || !strings.Contains(docs[1].Prompt, "execute_fix is not available: execute_fix: phase 2 had 1 of its max_execute_fix_per_phase (1) fixes") ||
		strings.Contains(docs[1].Prompt, `| "execute_fix"`) {
		t.Fatalf("%d Doctor sessions; the second prompt:\n%s", len(docs), docs[len(docs)-1].Prompt)
	}
	got := decisions(t, h, s)
	if !strings.Contains(got, "doctor:execute_fix execute_fix execute_fix:ran") || !strings.Contains(got, "doctor:none execute_fix:refused") || strings.Count(got, "execute_fix:ran") != 1 {
		t.Fatalf("decisions %q", got)
	}
}

// leftOut runs script, whose Doctor answers action, on chainPlan(3)
// with doctor_actions only: the Doctor's one prompt must say action is
// not available, the run halt and its first decisions be no advice and
// action refused. It returns the harness, the end state and the prompt.
func leftOut(t *testing.T, script, action string, only ...string) (*harness, state.ExecutionState, string) {
	t.Helper()
	h := newHarness(t, script)
	cfg := on()
	cfg.Recovery.DoctorActions = &only
	res, err := h.start(chainPlan(3), cfg)
	s := mustDone(t, res, err, state.RunHalted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 {
		t.Fatalf("%d Doctor sessions, want 1", len(docs))
	}
	if !strings.Contains(docs[0].Prompt, action+" is not available: this run's doctor_actions leave it out") {
		t.Fatalf("prompt:\n%s", docs[0].Prompt)
	}
	if got := decisions(t, h, s); !strings.HasPrefix(got, "doctor:none "+action+":refused") {
		t.Fatalf("decisions %q", got)
	}
	return h, s, docs[0].Prompt
}

// doctor_actions without execute_fix: the prompt says it is not
// available and the answer naming it is refused.
func TestRecoveryDoctorActionsLeaveExecuteFixOut(t *testing.T) {
	h, s, _ := leftOut(t, fixScript, "execute_fix", "rollback_provider")
	if n := fixRuns(t, h); n != 0 {
		t.Fatalf("the fix ran %d times", n)
	}
	if d := readDecision(t, h, s, 2); !strings.Contains(d.Why, "execute_fix is not one of this run's doctor_actions (rollback_provider)") {
		t.Fatalf("refusal %+v", d)
	}
}

// A fix is kept in the checkpointed state, pending then run: with the
// checkpoint that grants it lost, or the one that records its run, or
// a later one, the resumed run never runs it twice and still retries
// the phase to the end.
func TestRecoveryExecuteFixSurvivesACrash(t *testing.T) {
	script := strings.Replace(fixScript, "      - run: 'cat fixed.txt'\n", "", 1)
	losingEach(t, script, on(), []byte(`"fix":{`), func(k, m int64, h *harness, res graph.Result[state.ExecutionState], err error) {
		s := mustDone(t, res, err, state.RunCompleted)
		if runs := fixRuns(t, h); runs != 1 {
			t.Fatalf("checkpoint %d lost: the fix ran %d times, want 1", k, runs)
		}
		rs := recoveryOf(t, s)
		if rs.Fix == nil || rs.Fix.Ran == rs.Fix.Abandoned {
			t.Fatalf("checkpoint %d lost: fix state %+v", k, rs.Fix)
		}
		if k == m+1 && !rs.Fix.Abandoned {
			t.Fatalf("checkpoint %d (the fix's run) lost: fix state %+v, want abandoned", k, rs.Fix)
		}
	})
}
