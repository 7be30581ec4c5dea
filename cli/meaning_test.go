package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/nodes"
)

// bin runs the real gaffer binary (built once per test binary) and
// returns its output (stdout and stderr) and exit code.
func bin(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(gafferBinary(t), args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("gaffer %v: %v\n%s", args, err, out)
	}
	return string(out), 0
}

// decisionRecords reads the decision records committed at rev under the
// run's execution directory, in order.
func decisionRecords(t *testing.T, dir, rev, execDir string) []nodes.DecisionRecord {
	t.Helper()
	var out []nodes.DecisionRecord
	for _, f := range strings.Fields(gitOut(t, dir, "ls-tree", "-r", "--name-only", rev, "--", execDir+"/recovery/")) {
		var r nodes.DecisionRecord
		if err := json.Unmarshal([]byte(gitOut(t, dir, "show", rev+":"+f)), &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, r)
	}
	return out
}

// decisionTrail is decisionRecords as text: each record's decision and
// why, "decision@why", one a line.
func decisionTrail(t *testing.T, dir, rev, execDir string) string {
	t.Helper()
	var lines []string
	for _, r := range decisionRecords(t, dir, rev, execDir) {
		lines = append(lines, r.Decision+"@"+r.Why)
	}
	return strings.Join(lines, "\n")
}

// The Doctor is asked about the attempt that failed, and its decision
// record says so: after attempt 2 of a phase with an attempt left, the
// record names attempt 2, not attempt 3 that review had already counted.
func TestDecisionRecordNamesTheFailedAttempt(t *testing.T) {
	t.Parallel()
	script := retryWithHintScript
	dir, plan, sp := recoveryRepo(t, script)
	commitConfig(t, dir, "profiles:\n  default:\n    limits: {max_phase_attempts: 3}\n")
	if out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-att"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-att")
	recs := decisionRecords(t, dir, runRev(t, dir), v.ExecDir)
	if len(recs) != 1 || recs[0].Decision != "doctor:retry_with_hint" || recs[0].Attempt != 2 || recs[0].Phase != 2 {
		t.Fatalf("decision records %+v; want one doctor:retry_with_hint of phase 2, attempt 2", recs)
	}
	if v.Recovery == nil || v.Recovery.Last == nil || v.Recovery.Last.Attempt != 2 {
		t.Fatalf("status recovery %+v; want the last decision's attempt 2", v.Recovery)
	}
}

// An escalation is played offline: the script answers sessions by model
// (model:), the Doctor's strong_model reaches its session, and the
// escalated attempt runs with roles.developer.escalation_model, as the
// run's output and its decision records show.
func TestScriptedEscalationReachesTheModels(t *testing.T) {
	t.Parallel()
	script := developerScript(passPhase1,
		session(2, "", failPrintf(`--- FAIL: TestEval (0.00s)\n    eval_test.go:12: Eval(1+2) = 4, want 3\nFAIL\n`)),
		session(2, "model: big-model", writeImpl),
	) + roleAnswer("replanner", `'{"approach":"compute the sum with an explicit loop over the operands","tasks":[{"id":"2","title":"implement","type":"impl"}]}'`) +
		roleAnswer("doctor", `'{"action":"escalate_model","confidence":0.9,"category":"logic_error","rationale":"the model keeps making the same mistake"}'`, "model: strong-m")
	dir, plan, sp := recoveryRepo(t, script)
	commitConfig(t, dir, "profiles:\n  default:\n    roles:\n      developer: {escalation_model: big-model}\n      doctor: {model: cheap-m, strong_model: strong-m}\n")
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-esc")
	if code != 0 || !strings.Contains(out, "[developer p2 a4 i1 big-model] write impl.txt") || !strings.Contains(out, "strong-m]") {
		t.Fatalf("run: exit %d; want the Doctor's strong model asked and attempt 4 run with big-model\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-esc")
	if v.Status != "completed" || v.Recovery == nil || v.Recovery.Escalations != 1 || v.Recovery.DoctorStrong != 1 {
		t.Fatalf("status %s recovery %+v; want one escalation and one strong Doctor call", v.Status, v.Recovery)
	}
	all := decisionTrail(t, dir, runRev(t, dir), v.ExecDir)
	if !strings.Contains(all, "doctor:escalate_model@") || !strings.Contains(all, "escalate_model@the Doctor advised a stronger model") || !strings.Contains(all, "(model big-model, phase 2 only)") {
		t.Fatalf("decision records:\n%s\nwant the Doctor's escalate_model and the escalation to big-model", all)
	}
}

// budgetScript spends 10,200 tokens in phase 1, ten times a budget of
// max_run_tokens: 1000.
var budgetScript = developerScript(
	passPhase1+"    usage: {input_tokens: 10000, output_tokens: 200}\n",
	session(2, "", writeImpl),
)

// max_run_tokens is a limit: a run that spent it stops before the next
// session, resumably, with the true figures and the key named in the
// decision, status and, once the human says stop, the halt message.
func TestRunBudgetStopsTheRun(t *testing.T) {
	t.Parallel()
	const why = "the run budget is spent: max_run_tokens 1,000: 10,200 tokens spent (1,020%) (raise it under limits: in gaffer.yaml), before phase 2, attempt 1"
	for _, answer := range []string{"stop", "retry"} {
		t.Run(answer, func(t *testing.T) {
			dir, plan, sp := recoveryRepo(t, budgetScript)
			commitConfig(t, dir, "profiles:\n  default:\n    limits: {max_run_tokens: 1000}\n")
			out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-budget")
			if code != ExitAwaitingApproval || strings.Contains(out, "[developer p2") || !strings.Contains(out, why) || !strings.Contains(out, "1,020% of its budget") {
				t.Fatalf("run: exit %d; want it waiting before phase 2's session, naming max_run_tokens and 1,020%%\n%s", code, out)
			}
			v := statusJSON(t, "--repo", dir, "r-budget")
			if v.Status != "awaiting_approval" || v.Recovery == nil || v.Recovery.Last == nil || v.Recovery.Last.Decision != "run_budget" || v.Recovery.Last.Why != why {
				t.Fatalf("status %s recovery %+v; want the run_budget decision naming max_run_tokens", v.Status, v.Recovery)
			}
			if out, code := bin(t, "--repo", dir, "status", "r-budget"); code != 0 || !strings.Contains(out, "max_run_tokens") {
				t.Fatalf("status: exit %d; want max_run_tokens named\n%s", code, out)
			}
			out, code = bin(t, "--repo", dir, "approve", "r-budget", "--decision", answer)
			v = statusJSON(t, "--repo", dir, "r-budget")
			if answer == "retry" {
				if code != 0 || v.Status != "completed" || !strings.Contains(out, "[developer p2 a1 i1] write impl.txt") {
					t.Fatalf("approve --decision retry: exit %d, status %s; want phase 2 run with one budget more\n%s", code, v.Status, out)
				}
				return
			}
			if v.Status != "halted" || len(v.Errors) == 0 || v.Errors[len(v.Errors)-1] != "run halted: "+why {
				t.Fatalf("approve --decision stop: exit %d, status %s, errors %q; want the halt message to name max_run_tokens\n%s", code, v.Status, v.Errors, out)
			}
		})
	}
}

// Recovery off: the budget still stops the run, halted, naming the key.
func TestRunBudgetWithRecoveryOffHalts(t *testing.T) {
	t.Parallel()
	dir, plan, sp := recoveryRepo(t, budgetScript)
	commitConfig(t, dir, "profiles:\n  default:\n    limits: {max_run_tokens: 1000}\n    recovery: {enabled: false}\n")
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-budget-off")
	v := statusJSON(t, "--repo", dir, "r-budget-off")
	if code == 0 || strings.Contains(out, "[developer p2") || v.Status != "halted" || len(v.Errors) == 0 || !strings.Contains(v.Errors[len(v.Errors)-1], "max_run_tokens 1,000: 10,200 tokens spent (1,020%)") {
		t.Fatalf("run: exit %d, status %s, errors %q\n%s", code, v.Status, v.Errors, out)
	}
}

// Every decision record of a run that ends without a phase commit to
// take it — halted by recovery, stopped by the human, cancelled while it
// waited — is committed on the run's branch, in the run's own work tree
// and in place.
func TestEndedRunsCommitTheirDecisionRecords(t *testing.T) {
	t.Parallel()
	for _, m := range runModes {
		for _, c := range []struct {
			name, answer string
			end          []string // the commands that end the run, after run
			last         string   // the last decision
			status       string
		}{
			{"halted", goodReplan, nil, "stuck:stop", "halted"},
			{"stopped", narrowReplan, []string{"approve", "r-end", "--decision", "stop"}, "human:stop", "halted"},
			{"cancelled", narrowReplan, []string{"cancel", "r-end"}, "replan:refused", "cancelled"},
		} {
			t.Run(m.name+", "+c.name, func(t *testing.T) {
				dir, plan, sp := replanRepo(t, c.answer)
				if c.name == "halted" {
					commitConfig(t, dir, "profiles:\n  default:\n    recovery: {max_replans_per_run: 0}\n")
				}
				out, code := bin(t, m.args("--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-end")...)
				if c.end != nil {
					if code != ExitAwaitingApproval {
						t.Fatalf("run: exit %d, want it waiting for a human\n%s", code, out)
					}
					out, _ = bin(t, append([]string{"--repo", dir}, c.end...)...) // the status below is the check
				}
				v := statusJSON(t, "--repo", dir, "r-end")
				if v.Status != c.status || v.Recovery == nil || v.Recovery.Last == nil || v.Recovery.Last.Decision != c.last {
					t.Fatalf("status %s recovery %+v, want %s after %s\n%s", v.Status, v.Recovery, c.status, c.last, out)
				}
				recs := decisionRecords(t, dir, m.rev("r-end"), v.ExecDir)
				if len(recs) != v.Recovery.Decisions || recs[len(recs)-1].Decision != c.last {
					t.Fatalf("%d decision records committed on %s (%+v), status counts %d ending with %s", len(recs), m.rev("r-end"), recs, v.Recovery.Decisions, c.last)
				}
				if st := gitOut(t, dir, "status", "--porcelain", "--", v.ExecDir+"/recovery"); st != "" {
					t.Fatalf("decision records left uncommitted after the run ended:\n%s", st)
				}
			})
		}
	}
}

const calcPlan = `# Plan: a calculator

### Task 1: write the test
- type: test
- depends on: none

Tests for Add and Sub in calc_test.go.

### Task 2: Implement Add and Sub
- type: impl
- depends on: 1

Implement Add and Sub in calc.go.
`

// calcRepo is recoveryRepo with calcPlan as its plan.
func calcRepo(t *testing.T, script string) (dir, plan, sp string) {
	t.Helper()
	dir, plan, sp = recoveryRepo(t, script)
	if err := os.WriteFile(plan, []byte(calcPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, plan, sp
}

// The goal anchor reads the goal: a revision that drops Sub ("Add
// applies; subtraction is deferred") goes to the human, one that says
// "skip" about something the goal does not name is accepted.
func TestGoalAnchorReadsTheGoal(t *testing.T) {
	t.Parallel()
	narrow := `'{"approach":"Get Add right first.","tasks":[{"id":"2","title":"Implement Add","type":"impl","description":"Add applies; subtraction is deferred."}]}'`
	dir, plan, sp := calcRepo(t, strings.Replace(repeatedFailure, "%s", narrow, 1))
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-sub")
	if code != ExitAwaitingApproval || !strings.Contains(out, "narrowing_revision") || !strings.Contains(out, "name Sub that task 2 names is no longer required") ||
		!strings.Contains(out, `"subtraction is deferred" puts off or weakens Sub`) {
		t.Fatalf("run: exit %d; want the revision that drops Sub refused, naming it\n%s", code, out)
	}
	innocent := `'{"approach":"Skip the slow rebuild between attempts by caching the module download.","tasks":[{"id":"2","title":"Implement Add and Sub","type":"impl","description":"Implement Add and Sub in calc.go."}]}'`
	dir, plan, sp = calcRepo(t, strings.Replace(repeatedFailure, "%s", innocent, 1))
	out, code = bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-skip")
	if code != 0 || !strings.Contains(out, "replan:accepted") {
		t.Fatalf("run: exit %d; want the innocent skip accepted\n%s", code, out)
	}
}

// A phase's changes that weaken its tests are narrowing once recovery
// acted on the phase: the attempt that deletes an assertion after an
// accepted revision waits for the human even though the reviewer
// approved it, and retry starts it again from the pre-phase commit.
func TestNarrowingDiffGoesToTheHuman(t *testing.T) {
	t.Parallel()
	const fails = `--- FAIL: TestSub (0.00s)\n    calc_test.go:7: Sub(3, 1) != 2\nFAIL\n`
	script := developerScript(
		session(1, "", `write: {path: calc_test.go, content: "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatal(\"Sub(3, 1) != 2\")\n\t}\n}\n"}`),
		session(2, "attempt: 1", failPrintf(fails)),
		session(2, "attempt: 2", failPrintf(fails)),
		session(2, "attempt: 3",
			`write: {path: calc_test.go, content: "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\t// if Sub(3, 1) != 2 { t.Fatal(\"Sub(3, 1) != 2\") }\n}\n"}`,
			`write: {path: calc.go, content: "package calc\n"}`),
		session(2, "attempt: 4", writeCalc),
	) + roleAnswer("replanner", `'{"approach":"Write Add and Sub in calc.go with plain integer arithmetic.","tasks":[{"id":"2","title":"Implement Add and Sub","type":"impl","description":"Implement Add and Sub in calc.go."}]}'`)
	dir, plan, sp := calcRepo(t, script)
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-diff")
	if code != ExitAwaitingApproval || !strings.Contains(out, "narrowing_change") || !strings.Contains(out, "calc_test.go: assertions go from 1 to 0") ||
		!strings.Contains(out, "calc_test.go: 1 test line(s) commented out") {
		t.Fatalf("run: exit %d; want the attempt that comments out the assertion sent to the human\n%s", code, out)
	}
	out, code = bin(t, "--repo", dir, "approve", "r-diff", "--decision", "retry")
	v := statusJSON(t, "--repo", dir, "r-diff")
	if code != 0 || v.Status != "completed" || !strings.Contains(out, "[developer p2 a4 i1] write calc.go") {
		t.Fatalf("approve --decision retry: exit %d, status %s\n%s", code, v.Status, out)
	}
	if got := gitOut(t, dir, "show", runRev(t, dir)+":calc_test.go"); !strings.Contains(got, "\t\tt.Fatal(") {
		t.Fatalf("the committed test lost its assertion:\n%s", got)
	}
}

// The escape hatch can be played offline: a scripted developer calls
// expand_context for an earlier phase and reads its decision records,
// reasons and all, from the Task Story's files in its work tree.
func TestScriptedExpandContextReadsTheStory(t *testing.T) {
	t.Parallel()
	script := `
developer:
  - phase: 1
    actions:
      - write: {path: a_test.txt, content: "test\n"}
    summary: wrote the test
    decisions: [{topic: queue, what: use Redis streams, why: Kafka was rejected because the ops team cannot run it}]
  - phase: 2
    actions:
      - expand_context: 1
      - write: {path: impl.txt, content: "good\n"}
`
	dir, plan, sp := recoveryRepo(t, script)
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-expand")
	if code != 0 || !strings.Contains(out, "[developer p2 a1 i1] expand_context 1") || !strings.Contains(out, "Decision records of phase 1:") ||
		!strings.Contains(out, "Kafka was rejected because the ops team cannot run it") {
		t.Fatalf("run: exit %d; want phase 2 to read phase 1's records\n%s", code, out)
	}
}
