package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const recoveryPlan = `# Plan: two phases

### Task 1: write the test
- type: test
- depends on: none

### Task 2: implement
- type: impl
- depends on: 1
`

// recoveryRepo makes a repository with one commit, and the plan and the
// script (given) in its .git directory, out of the work tree.
func recoveryRepo(t *testing.T, script string) (dir, plan, scriptPath string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	gitOut(t, ".", "init", "-q", "-b", "main", dir)
	writeTestFile(t, filepath.Join(dir, "README.md"), "# r\n")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "initial")
	plan, scriptPath = filepath.Join(dir, ".git", "plan.md"), filepath.Join(dir, ".git", "script.yaml")
	if err := os.WriteFile(plan, []byte(recoveryPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, plan, scriptPath
}

// Scripts for recoveryPlan's runs (agent/script/SCRIPT-FORMAT.md) are
// built from these pieces: developerScript's sessions, then the other
// roles' answers (roleAnswer).

// developerScript returns the developer's part of a script: sessions
// (each made by session), in order.
func developerScript(sessions ...string) string {
	return "\ndeveloper:\n" + strings.Join(sessions, "")
}

// session is one scripted developer session of phase: match, where not
// "", narrows which session it answers ("attempt: 2", "model: big-model"),
// and actions are its actions, one a line.
func session(phase int, match string, actions ...string) string {
	s := fmt.Sprintf("  - phase: %d\n", phase)
	if match != "" {
		s += "    " + match + "\n"
	}
	s += "    actions:\n"
	for _, a := range actions {
		s += "      - " + a + "\n"
	}
	return s
}

// roleAnswer is role's one scripted answer, in phase 2: answer is the
// YAML value (a quoted JSON document, or a %s to fill in), more are
// further keys of the entry ("model: strong-m").
func roleAnswer(role, answer string, more ...string) string {
	s := role + ":\n  - phase: 2\n    answer: " + answer + "\n"
	for _, m := range more {
		s += "    " + m + "\n"
	}
	return s
}

// The actions scripted sessions share: phase 1 writes the test, a passing
// phase 2 writes impl.txt.
const (
	writeTest = `write: {path: a_test.txt, content: "test\n"}`
	writeImpl = `write: {path: impl.txt, content: "good\n"}`
)

// passPhase1 is recoveryPlan's phase 1, scripted: it writes the test and passes.
var passPhase1 = session(1, "", writeTest)

// failWith is the action of a session whose command prints stderr and fails.
func failWith(stderr string) string {
	return `run: 'echo "` + stderr + `" >&2; exit 1'`
}

// failPrintf is the action of a session whose command prints output (a
// printf format, as go test's failure) to stderr and fails.
func failPrintf(output string) string {
	return `run: 'printf -- "` + output + `" >&2; exit 1'`
}

// repeatedFailure fails phase 2's first two attempts the same way (go
// test's failure, but for the line and the build directory) and passes
// the third; the replanner's answer is the %s to fill in.
var repeatedFailure = developerScript(passPhase1,
	session(2, "attempt: 1", failPrintf(`--- FAIL: TestEval (0.00s)\n    eval_test.go:12: Eval(1+2) = 4, want 3 (/tmp/go-build111/x)\nFAIL\n`)),
	session(2, "attempt: 2", failPrintf(`--- FAIL: TestEval (0.00s)\n    eval_test.go:57: Eval(1+2) = 4, want 3 (/tmp/go-build999/x)\nFAIL\n`)),
	session(2, "attempt: 3", writeImpl),
) + roleAnswer("replanner", "%s")

// The replanner's answers to repeatedFailure: goodReplan keeps phase 2's
// goal, narrowReplan drops its hard cases (a narrowing revision).
const (
	goodReplan   = `'{"approach":"compute the sum with an explicit loop over the operands","tasks":[{"id":"2","title":"implement","type":"impl"}]}'`
	narrowReplan = `'{"approach":"only stub the sum and skip the hard cases","tasks":[{"id":"2","title":"implement","type":"impl"}]}'`
)

// replanRepo is recoveryRepo with repeatedFailure, the replanner
// answering with answer.
func replanRepo(t *testing.T, answer string) (dir, plan, script string) {
	t.Helper()
	return recoveryRepo(t, strings.Replace(repeatedFailure, "%s", answer, 1))
}

// The user sees recovery: status --json counts the replan and names the
// last decision, the decision records are in the execution directory,
// and a refused (narrowing) revision waits for `approve --decision`.
func TestRecoveryIsVisibleAndAnswerable(t *testing.T) {
	t.Parallel()
	dir, plan, script := replanRepo(t, goodReplan)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-rec-1"); code != 0 ||
		!strings.Contains(out, "recovery, phase 2: replan — ") || !strings.Contains(out, "recovery, phase 2: replan:accepted — compute the sum") {
		t.Fatalf("run: exit %d, or recovery's decisions not shown\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-rec-1")
	if v.Status != "completed" || v.Recovery == nil || v.Recovery.Replans != 1 || v.Recovery.Last == nil || v.Recovery.Last.Decision != "replan:accepted" {
		t.Fatalf("status %+v recovery %+v", v.Status, v.Recovery)
	}
	// The run's own work tree is gone with its end: its branch holds them.
	recs := strings.Fields(gitOut(t, dir, "ls-tree", "-r", "--name-only", runRev(t, dir), "--", v.ExecDir+"/recovery/"))
	if len(recs) != v.Recovery.Decisions || len(recs) == 0 {
		t.Fatalf("%d decision records, status says %d", len(recs), v.Recovery.Decisions)
	}

	dir, plan, script = replanRepo(t, narrowReplan)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-rec-2")
	if code != ExitAwaitingApproval || !strings.Contains(out, "needs a human") || !strings.Contains(out, "--decision retry") {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "approve", "r-rec-2", "--decision", "maybe"); code != ExitUsage {
		t.Fatalf("a bad --decision: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "approve", "r-rec-2", "--decision", "retry", "--feedback", "keep every case; use a table"); code != 0 {
		t.Fatalf("approve --decision retry: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir, "r-rec-2"); v.Status != "completed" || v.Recovery.Last == nil {
		t.Fatalf("status %+v", v)
	}
}

// Recovery off in gaffer.yaml: the same run halts as it always did.
func TestRecoveryOffInTheProfileHalts(t *testing.T) {
	t.Parallel()
	dir, plan, script := replanRepo(t, "'{}'")
	if err := os.WriteFile(filepath.Join(dir, ".git", "gaffer-off.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	commitConfig(t, dir, "profiles:\n  default:\n    recovery: {enabled: false}\n")
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-off")
	if code == 0 {
		t.Fatalf("run: exit 0\n%s", out)
	}
	if v := statusJSON(t, "--repo", dir, "r-off"); v.Status != "halted" || v.Recovery != nil {
		t.Fatalf("status %s recovery %+v", v.Status, v.Recovery)
	}
}

// A run waiting for recovery's question is not waiting for its plan's
// approval: resume prints the question and the --decision commands.
func TestResumeWaitingForRecoveryPrintsTheQuestion(t *testing.T) {
	t.Parallel()
	dir, plan, script := replanRepo(t, narrowReplan)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-rec-q"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "resume", "r-rec-q")
	if code != ExitAwaitingApproval || strings.Contains(out, "approval of its plan") || !strings.Contains(out, "needs a human: phase 2") ||
		!strings.Contains(out, "narrowing_revision") || !strings.Contains(out, "approve r-rec-q --decision retry") || !strings.Contains(out, "--decision stop") {
		t.Fatalf("resume of a run waiting for recovery: exit %d\n%s", code, out)
	}
}
