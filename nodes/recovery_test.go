package nodes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// on is a run config with recovery on.
func on() state.RunConfig {
	return state.RunConfig{AutoApprove: true, Recovery: &state.RecoveryConfig{}}
}

func recoveryOf(t *testing.T, s state.ExecutionState) recoveryState {
	t.Helper()
	rs, err := loadRecovery(s)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// goFail is a developer step whose go test fails; line and dir vary the
// text the way two runs of the same failure do.
func goFail(attempt int, line, dir string) string {
	return `
  - phase: 2
    attempt: ` + itoa(attempt) + `
    actions:
      - write: {path: impl.txt, content: "try ` + itoa(attempt) + `\n"}
      - run: 'printf -- "--- FAIL: TestEval (0.00s)\n    eval_test.go:` + line + `: Eval(\"1 + 2\") = 4, want 3 (fixture ` + dir + `/in.txt)\nFAIL\nFAIL\texample.com/calc\t0.004s\n" >&2; exit 1'`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

const phase1OK = `
developer:
  - phase: 1
    actions:
      - write: {path: a_test.txt, content: "test\n"}`

const accepted = `'{"approach":"compute the sum with an explicit loop over the operands and check it against the table test","tasks":[{"id":"2","title":"implement","type":"impl"}]}'`

// Proof 1: a transient failure, then success: no Doctor, counters 0.
func TestRecoveryTransientFailureNeedsNoDoctor(t *testing.T) {
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/go-build1")+`
  - phase: 2
    attempt: 2
    actions:
      - write: {path: impl.txt, content: "good\n"}
doctor:
  - answer: '{"action":"stop","confidence":1,"category":"test_failure","rationale":"never asked"}'
`)
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunCompleted)
	if docs, _ := h.rec.of(agent.RoleDoctor); len(docs) != 0 {
		t.Fatalf("the Doctor was asked %d times", len(docs))
	}
	m := recoveryOf(t, s).Memory
	if m.DoctorCalls != 0 || m.Replans != 0 || m.Escalations != 0 || m.Phase(1).Attempts != 1 {
		t.Fatalf("memory %+v", m)
	}
	if f := m.Phase(1).Failures; len(f) != 1 || f[0].Category != recovery.CatTestFailure {
		t.Fatalf("failures %+v", f)
	}
}

// Proof 2: the same go test failure twice, differing only in line numbers
// and temp dirs: a replan whose prompt carries the frozen anchor
// verbatim, then success.
func TestRecoveryRepeatedFailureReplansWithTheAnchor(t *testing.T) {
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/go-build111")+goFail(2, "57", "/tmp/go-build999")+`
  - phase: 2
    attempt: 3
    actions:
      - write: {path: impl.txt, content: "good\n"}
replanner:
  - phase: 2
    answer: `+accepted+`
`)
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunCompleted)
	rps, _ := h.rec.of(agent.RoleReplanner)
	if len(rps) != 1 {
		t.Fatalf("%d replanner sessions, want 1", len(rps))
	}
	rs := recoveryOf(t, s)
	a := rs.Memory.Phase(1).Anchor
	if a == nil || !strings.Contains(rps[0].Prompt, a.Constraint()) || !strings.Contains(rps[0].Prompt, "<goal-anchor>") {
		t.Fatalf("the replan prompt lacks the frozen anchor:\n%s", rps[0].Prompt)
	}
	if rs.Memory.Replans != 1 || rs.Memory.Phase(1).Replans != 1 || rs.Memory.Pending != nil {
		t.Fatalf("memory %+v", rs.Memory)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	last := devs[len(devs)-1]
	if last.Attempt != 3 || !strings.Contains(last.Prompt, "explicit loop over the operands") {
		t.Fatalf("attempt %d does not carry the revised approach:\n%s", last.Attempt, last.Prompt)
	}
	if rs.Last == nil || rs.Last.Decision != "replan:accepted" {
		t.Fatalf("last decision %+v", rs.Last)
	}
	if _, err := os.Stat(filepath.Join(h.dir, decisionPath(s, rs.Decisions))); err != nil {
		t.Fatalf("decision record: %v", err)
	}
}

// Proof 3: two different failures: no replan; the Doctor's hint appears
// in the next prompt.
func TestRecoveryDifferentFailuresGetTheDoctorsHint(t *testing.T) {
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/a")+`
  - phase: 2
    attempt: 2
    actions:
      - run: 'echo "./eval.go:3:9: undefined: parseOperand" >&2; exit 1'
  - phase: 2
    attempt: 3
    actions:
      - write: {path: impl.txt, content: "good\n"}
doctor:
  - phase: 2
    answer: '{"action":"retry_with_hint","confidence":0.9,"category":"build_error","rationale":"a helper is missing","hint":"define parseOperand before Eval uses it"}'
replanner:
  - phase: 2
    answer: `+accepted+`
`)
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunCompleted)
	if rps, _ := h.rec.of(agent.RoleReplanner); len(rps) != 0 {
		t.Fatalf("two different failures replanned")
	}
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || docs[0].Tier != "strong" && docs[0].Tier != "cheap" {
		t.Fatalf("doctor sessions %+v", docs)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if last := devs[len(devs)-1]; last.Attempt != 3 || !strings.Contains(last.Prompt, "define parseOperand before Eval uses it") {
		t.Fatalf("the next prompt lacks the hint:\n%s", last.Prompt)
	}
	if m := recoveryOf(t, s).Memory; m.DoctorCalls != 1 || m.Replans != 0 {
		t.Fatalf("memory %+v", m)
	}
}

var _ = context.Background
var _ = graph.END
