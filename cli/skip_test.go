package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// skipPlan is recoveryPlan with a third phase that depends on the second.
const skipPlan = recoveryPlan + `
### Task 3: document it
- type: impl
- depends on: 2
`

// The Doctor's skip_phase through the binary: the run asks the human
// (exit 4), the question says phase 3 depends on phase 2 and how to
// skip; `approve --decision skip` skips phase 2 (none of its work
// committed), runs phase 3 and completes; status --json, list, history
// --json and the end summary say skipped, and the committed decision
// records say who proposed the skip and who approved it. A skip to a
// question that does not offer it is refused (exit 2).
func TestScriptedSkipPhase(t *testing.T) {
	t.Parallel()
	script := developerScript(passPhase1,
		session(2, "attempt: 1", `write: {path: half.txt, content: "half\n"}`, failWith("./eval.go:3:9: undefined: parseOperand")),
		session(2, "attempt: 2", failWith("zz_generated.go: no such file or directory")),
		session(3, "", `write: {path: doc.txt, content: "docs\n"}`),
	) + roleAnswer("doctor", `'{"action":"skip_phase","confidence":0.8,"category":"build_error","rationale":"the generator is not in this repository"}'`)
	dir, plan, sp := recoveryRepo(t, script)
	if err := os.WriteFile(plan, []byte(skipPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-skip")
	if code != ExitAwaitingApproval || !strings.Contains(out, "skip_phase") || !strings.Contains(out, "phase 3 (task 3 depends on 2)") ||
		!strings.Contains(out, "skip the phase:  gaffer") || !strings.Contains(out, "approve r-skip --decision skip") {
		t.Fatalf("run: exit %d; want the Doctor's skip put to the human\n%s", code, out)
	}
	out, code = bin(t, "--repo", dir, "approve", "r-skip", "--decision", "skip", "--feedback", "the docs do not need it")
	if code != 0 || !strings.Contains(out, "Skipped phases: 2") || !strings.Contains(out, "[developer p3 a1 i1] write doc.txt") {
		t.Fatalf("approve --decision skip: exit %d\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-skip")
	if v.Status != "completed" || len(v.Phases) != 3 || v.Phases[1].Status != "skipped" || v.Phases[2].Status != "completed" {
		t.Fatalf("status %s, phases %+v", v.Status, v.Phases)
	}
	if out, _ := gaffer(t, "--repo", dir, "list"); !strings.Contains(out, "(1 skipped)") {
		t.Fatalf("list:\n%s", out)
	}
	hist, code := gaffer(t, "--repo", dir, "history", "r-skip", "--json")
	var cps []struct {
		Phase       int    `json:"phase"`
		PhaseStatus string `json:"phase_status"`
	}
	if err := json.Unmarshal([]byte(hist), &cps); code != 0 || err != nil {
		t.Fatalf("history: exit %d, %v\n%s", code, err, hist)
	}
	skipped := false
	for _, c := range cps {
		skipped = skipped || c.Phase == 2 && c.PhaseStatus == "skipped"
	}
	if !skipped {
		t.Fatalf("history shows no skipped phase 2:\n%s", hist)
	}
	rev := runRev(t, dir)
	if log := gitOut(t, dir, "log", "--format=%s", rev); strings.Contains(log, "phase 2") || !strings.Contains(log, "phase 3") {
		t.Fatalf("the run's commits:\n%s", log)
	}
	if files := gitOut(t, dir, "ls-tree", "-r", "--name-only", rev); strings.Contains(files, "half.txt") || !strings.Contains(files, "doc.txt") {
		t.Fatalf("the run's tree:\n%s", files)
	}
	got := decisionTrail(t, dir, rev, v.ExecDir)
	if !strings.Contains(got, "doctor:skip_phase@the generator is not in this repository") ||
		!strings.Contains(got, "human:skip@phase 2 skipped: proposed by the Doctor (decision") || !strings.Contains(got, "the docs do not need it") {
		t.Fatalf("decision records:\n%s", got)
	}
}

// A skip to a recovery question that does not offer it: exit 2, one
// line; the run still waits for its answer.
func TestSkipRefusedWithoutTheDoctorsProposal(t *testing.T) {
	t.Parallel()
	dir, plan, sp := replanRepo(t, narrowReplan)
	if out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-noskip"); code != ExitAwaitingApproval ||
		strings.Contains(out, "--decision skip") {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := bin(t, "--repo", dir, "approve", "r-noskip", "--decision", "skip")
	if code != ExitUsage || !strings.Contains(out, "question does not offer skip") {
		t.Fatalf("approve --decision skip: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir, "r-noskip"); v.Status != "awaiting_approval" {
		t.Fatalf("status %s after a refused skip", v.Status)
	}
}
