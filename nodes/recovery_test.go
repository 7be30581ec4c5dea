package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
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

// acceptedReplan is a replanner step for phase 2 whose revision is accepted.
const acceptedReplan = `
replanner:
  - phase: 2
    answer: ` + accepted + `
`

// phase2FailsThrice is phase 1 passing, then phase 2's go test failing its
// first three attempts (each at another line) and passing its fourth: the
// script of the escalation proofs.
func phase2FailsThrice() string {
	return phase1OK + goFail(1, "12", "/tmp/e1") + goFail(2, "14", "/tmp/e2") + goFail(3, "15", "/tmp/e3") + okN(2, 4)
}

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

// failN is a developer step of phase (0: any) and attempt that fails
// with text.
func failN(phase, attempt int, text string) string {
	return `
  - phase: ` + itoa(phase) + `
    attempt: ` + itoa(attempt) + `
    actions:
      - run: 'echo "` + text + `" >&2; exit 1'`
}

func okN(phase, attempt int) string {
	return `
  - phase: ` + itoa(phase) + `
    attempt: ` + itoa(attempt) + `
    actions:
      - write: {path: impl.txt, content: "good ` + itoa(phase) + `\n"}`
}

// phase3OK is phase 3's session, which writes more.txt.
const phase3OK = `
  - phase: 3
    actions:
      - write: {path: more.txt, content: "good 3\n"}`

const hintAnswer = `'{"action":"retry_with_hint","confidence":0.9,"category":"agent_gave_up","rationale":"r","hint":"look closer"}'`

func chainPlan(n int) string {
	var b strings.Builder
	b.WriteString("# Plan: a chain\n\n### Task 1: write the test\n- type: test\n- depends on: none\n")
	for i := 2; i <= n; i++ {
		b.WriteString("\n### Task " + itoa(i) + ": step " + itoa(i) + "\n- type: impl\n- depends on: " + itoa(i-1) + "\n")
	}
	return b.String()
}

// Proof 4: the per-phase (2) and per-run (10) Doctor budgets hold.
func TestRecoveryDoctorBudgetsHold(t *testing.T) {
	t.Run("phase", func(t *testing.T) {
		h := newHarness(t, phase1OK+failN(2, 0, "nothing works here")+okN(2, 6)+"\ndoctor:\n  - answer: "+hintAnswer+"\n")
		cfg := on()
		cfg.Limits.MaxPhaseAttempts = 6
		res, err := h.start(twoPhasePlan, cfg)
		s := mustDone(t, res, err, state.RunCompleted)
		docs, _ := h.rec.of(agent.RoleDoctor)
		m := recoveryOf(t, s).Memory
		if len(docs) != 2 || m.Phase(1).DoctorCalls != 2 || m.DoctorCalls != 2 {
			t.Fatalf("%d doctor sessions, memory %+v; want 2 (the phase's budget)", len(docs), m)
		}
	})
	t.Run("run", func(t *testing.T) {
		script := "developer:" + okN(1, 1) + failN(0, 1, "first try fails") + failN(0, 2, "second try fails") + failN(0, 3, "third try fails") + okN(0, 4) +
			"\ndoctor:\n  - answer: " + hintAnswer + "\n"
		h := newHarness(t, script)
		cfg := on()
		cfg.Limits.MaxPhaseAttempts = 4
		res, err := h.start(chainPlan(8), cfg)
		s := mustDone(t, res, err, state.RunCompleted)
		docs, _ := h.rec.of(agent.RoleDoctor)
		m := recoveryOf(t, s).Memory
		if len(docs) != 10 || m.DoctorCalls != 10 {
			t.Fatalf("%d doctor sessions, %d counted; want 10 (the run's budget)", len(docs), m.DoctorCalls)
		}
		for _, d := range docs {
			if d.Phase > 6 {
				t.Fatalf("phase %d got a Doctor past the run's budget", d.Phase)
			}
		}
	})
}

// Proof 5: an infra failure calls the Doctor at once, from its own budget.
func TestRecoveryInfraFailureCallsTheDoctorAtOnce(t *testing.T) {
	h := newHarness(t, phase1OK+`
  - phase: 2
    attempt: 1
    driver_error: "HTTP 503 service unavailable from the model endpoint"`+okN(2, 2)+`
doctor:
  - answer: '{"action":"retry_with_hint","confidence":0.95,"category":"infra","rationale":"the provider was down","hint":"just retry"}'
`)
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunCompleted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	m := recoveryOf(t, s).Memory
	if len(docs) != 1 || docs[0].Attempt != 1 {
		t.Fatalf("doctor sessions %d (want 1, after attempt 1)", len(docs))
	}
	if m.DoctorInfra != 1 || m.DoctorCalls != 1 || m.Phase(1).DoctorCalls != 0 || m.Phase(1).Failures[0].Category != recovery.CatInfra {
		t.Fatalf("memory %+v", m)
	}
}

// Proof 6: the cheap Doctor is unsure: the strong one is asked, and counted.
func TestRecoveryUnsureCheapDoctorAsksTheStrongOne(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "it fails one way")+failN(2, 2, "it fails one way")+okN(2, 3)+`
doctor:
  - tier: cheap
    answer: '{"action":"retry_with_hint","confidence":0.4,"category":"agent_gave_up","rationale":"not sure","hint":"maybe this"}'
  - tier: strong
    answer: '{"action":"retry_with_hint","confidence":0.9,"category":"agent_gave_up","rationale":"sure","hint":"do that"}'
`)
	cfg := on()
	cfg.Limits.MaxPhaseAttempts = 3
	cfg.Agents.Doctor = state.AgentConfig{Driver: "llm", Model: "small", StrongModel: "large"}
	res, err := h.start(twoPhasePlan, cfg)
	s := mustDone(t, res, err, state.RunCompleted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 2 || docs[0].Tier != "cheap" || docs[1].Tier != "strong" || docs[0].Model != "small" || docs[1].Model != "large" {
		t.Fatalf("doctor sessions %+v", docs)
	}
	m := recoveryOf(t, s).Memory
	if m.DoctorCalls != 2 || m.DoctorStrong != 1 {
		t.Fatalf("memory %+v", m)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if !strings.Contains(devs[len(devs)-1].Prompt, "do that") {
		t.Fatal("the strong Doctor's hint is not in the next prompt")
	}
}

// Proof 7: a configured fatal category replans at the first failure.
func TestRecoveryFatalCategoryReplansAtOnce(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "SCHEMA DRIFT in calc.proto")+okN(2, 2)+acceptedReplan)
	cfg := on()
	cfg.Recovery.Fatal = []state.FatalPattern{{Name: "schema_drift", Pattern: "SCHEMA DRIFT"}}
	res, err := h.start(twoPhasePlan, cfg)
	s := mustDone(t, res, err, state.RunCompleted)
	rps, _ := h.rec.of(agent.RoleReplanner)
	if len(rps) != 1 || rps[0].Attempt != 1 {
		t.Fatalf("replanner sessions %d, want 1 after attempt 1", len(rps))
	}
	if f := recoveryOf(t, s).Memory.Phase(1).Failures; f[0].Category != "schema_drift" {
		t.Fatalf("failure %+v", f)
	}
}

// askedAboutNarrowing starts a run of twoPhasePlan whose phase 2 fails
// twice and whose replanner's revision narrows it (it only stubs the
// sum), and returns it stopped at the question that revision puts to the
// human; phase 2's attempt 3 succeeds.
func askedAboutNarrowing(t *testing.T) (*harness, graph.Result[state.ExecutionState]) {
	t.Helper()
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/x1")+goFail(2, "13", "/tmp/x2")+okN(2, 3)+`
replanner:
  - phase: 2
    answer: '{"approach":"only stub the sum and skip the hard cases for now","tasks":[{"id":"2","title":"implement","type":"impl"}]}'
`)
	res, err := h.start(twoPhasePlan, on())
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	return h, res
}

// Proof 8: a narrowing revision is refused, the run asks the human, and
// approving with feedback continues it.
func TestRecoveryNarrowingRevisionAsksTheHuman(t *testing.T) {
	h, res := askedAboutNarrowing(t)
	rs := recoveryOf(t, res.State)
	if rs.Question == nil || rs.Question.Decision != "narrowing_revision" || len(rs.Question.Problems) == 0 {
		t.Fatalf("question %+v", rs.Question)
	}
	res, err := h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true, Feedback: "keep every case; use a table of operators"}))
	mustDone(t, res, err, state.RunCompleted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	last := devs[len(devs)-1]
	if last.Attempt != 3 || !strings.Contains(last.Prompt, "use a table of operators") || strings.Contains(last.Prompt, "only stub") {
		t.Fatalf("attempt %d prompt:\n%s", last.Attempt, last.Prompt)
	}
}

// Proof 9: attempts exhausted after a replan: the model is escalated for
// that phase only.
func TestRecoveryEscalatesTheModelForThatPhaseOnly(t *testing.T) {
	h := newHarness(t, phase2FailsThrice()+okN(3, 1)+acceptedReplan)
	cfg := on()
	cfg.Agents.Developer = state.AgentConfig{Driver: "llm", Model: "small", EscalationModel: "big-model"}
	res, err := h.start(chainPlan(3), cfg)
	s := mustDone(t, res, err, state.RunCompleted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	models := map[[2]int]string{}
	for _, d := range devs {
		models[[2]int{d.Phase, d.Attempt}] = d.Model
	}
	if models[[2]int{2, 4}] != "big-model" || models[[2]int{2, 3}] != "" || models[[2]int{3, 1}] != "" {
		t.Fatalf("session models %v: want big-model for phase 2 attempt 4 only", models)
	}
	if m := recoveryOf(t, s).Memory; m.Escalations != 1 || m.Phase(1).Escalations != 1 {
		t.Fatalf("memory %+v", m)
	}
}

// The same run without roles.developer.escalation_model: the stuck
// handler skips escalate_model (escalating to the same model is no
// escalation) and stops.
func TestRecoveryWithoutAnEscalationModelStops(t *testing.T) {
	h := newHarness(t, phase2FailsThrice()+okN(3, 1)+acceptedReplan)
	cfg := on()
	cfg.Agents.Developer = state.AgentConfig{Driver: "llm", Model: "small"}
	res, err := h.start(chainPlan(3), cfg)
	s := mustDone(t, res, err, state.RunHalted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	for _, d := range devs {
		if d.Phase == 2 && d.Attempt > 3 {
			t.Fatalf("phase 2 got attempt %d with model %q; want a halt after attempt 3", d.Attempt, d.Model)
		}
	}
	rs := recoveryOf(t, s)
	if m := rs.Memory; m.Escalations != 0 || len(rs.Escalated) != 0 {
		t.Fatalf("escalated without an escalation model: %+v", m)
	}
	if rs.Last == nil || rs.Last.Decision != "stuck:stop" {
		t.Fatalf("last decision %+v, want stuck:stop", rs.Last)
	}
}

// The Doctor's escalate_model without an escalation model configured is
// no advice: the phase, its attempts used, goes to the stuck handler,
// which (no replanner, nothing to escalate to) stops; nothing is recorded
// as escalated and no third attempt runs.
func TestRecoveryDoctorEscalateWithoutAnEscalationModelIsNoAdvice(t *testing.T) {
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/a")+`
  - phase: 2
    attempt: 2
    actions:
      - run: 'echo "./eval.go:3:9: undefined: parseOperand" >&2; exit 1'
`+okN(2, 3)+`
doctor:
  - phase: 2
    answer: '{"action":"escalate_model","confidence":0.9,"category":"build_error","rationale":"the model is too weak"}'
`)
	cfg := on()
	cfg.Agents.Developer = state.AgentConfig{Driver: "llm", Model: "small"}
	res, err := h.start(twoPhasePlan, cfg)
	s := mustDone(t, res, err, state.RunHalted)
	rs := recoveryOf(t, s)
	if rs.Memory.Escalations != 0 || len(rs.Escalated) != 0 {
		t.Fatalf("escalated without an escalation model: memory %+v escalated %v", rs.Memory, rs.Escalated)
	}
	if rs.Last == nil || rs.Last.Decision != "stuck:stop" {
		t.Fatalf("last decision %+v, want stuck:stop", rs.Last)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if last := devs[len(devs)-1]; last.Phase != 2 || last.Attempt != 2 {
		t.Fatalf("last developer session: phase %d attempt %d model %q, want phase 2 attempt 2", last.Phase, last.Attempt, last.Model)
	}
}

// Proof 10: 80% of the budget spent: an event, then a reduce-scope
// proposal that interrupts; rejecting it ends the run cleanly at the last
// good commit.
func TestRecoveryBudgetReduceScopeThenReject(t *testing.T) {
	h := newHarness(t, phase1OK+`
    usage: {input_tokens: 850, output_tokens: 0}`+failN(2, 0, "nothing works here")+`
`)
	var warned int
	unsub := h.runner.Subscribe(func(e graph.Event) {
		if e.Kind == graph.Custom && e.Name == events.EventBudgetWarning {
			warned++
		}
	})
	defer unsub()
	cfg := on()
	cfg.Limits.MaxRunTokens = 1000
	res, err := h.start(twoPhasePlan, cfg)
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	rs := recoveryOf(t, res.State)
	if rs.Question == nil || rs.Question.Decision != "reduce_scope" || !rs.BudgetWarned || warned != 1 {
		t.Fatalf("question %+v, warned %v/%d", rs.Question, rs.BudgetWarned, warned)
	}
	res, err = h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: false}))
	s := mustDone(t, res, err, state.RunHalted)
	haltedWithRecords(t, h, s)
	want := "?? notes.txt"
	if got := h.git("status", "--porcelain"); got != want {
		t.Fatalf("tree after the stop:\n%s\nwant\n%s", got, want)
	}
}

// Proof 11: everything exhausted: STOP, the same halt and history as a
// run with recovery off.
func TestRecoveryExhaustedStopsLikeRecoveryOff(t *testing.T) {
	script := phase1OK + failN(2, 0, "the agent cannot do this") + "\n"
	var logs, outcomes [2]string
	var errs [2][]string
	for k, cfg := range []state.RunConfig{{AutoApprove: true}, on()} {
		h := newHarness(t, script)
		unsub := h.runner.Subscribe(func(e graph.Event) {
			if pf, ok := e.Payload.(events.PhaseFinished); ok && e.Kind == graph.Custom {
				outcomes[k] += fmt.Sprintf("%d/%d:%s ", pf.Phase, pf.Attempt, pf.Outcome)
			}
		})
		defer unsub()
		res, err := h.start(twoPhasePlan, cfg)
		s := mustDone(t, res, err, state.RunHalted)
		logs[k], errs[k] = h.git("log", "--all", "--format=%H %T %s"), s.Errors
		if k == 1 {
			// Recovery on adds the commit of its decision records, and
			// only that.
			haltedWithRecords(t, h, s)
			logs[k] = logs[k][strings.IndexByte(logs[k], '\n')+1:]
			if rs := recoveryOf(t, s); rs.Last == nil || !strings.HasPrefix(rs.Last.Decision, "stuck:") {
				t.Fatalf("last decision %+v", rs.Last)
			}
		}
	}
	if logs[0] != logs[1] || strings.Join(errs[0], "\n") != strings.Join(errs[1], "\n") || outcomes[0] != outcomes[1] {
		t.Fatalf("recovery off:\n%s\n%q\n%s\nrecovery on:\n%s\n%q\n%s", logs[0], errs[0], outcomes[0], logs[1], errs[1], outcomes[1])
	}
}

// Proof 13: a Doctor answer that is not JSON is counted and gives no
// action.
func TestRecoveryMalformedDoctorAnswerIsCountedNoAction(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "it broke")+failN(2, 2, "it broke differently, somewhere else entirely")+okN(2, 3)+`
doctor:
  - answer: I think you should replan this phase.
replanner:
  - phase: 2
    answer: `+accepted+`
`)
	cfg := on()
	cfg.Limits.MaxPhaseAttempts = 3
	res, err := h.start(twoPhasePlan, cfg)
	s := mustDone(t, res, err, state.RunCompleted)
	m := recoveryOf(t, s).Memory
	adv := m.Phase(1).LastAdvice
	if m.DoctorCalls != 1 || adv == nil || adv.Action != recovery.ActionNone || adv.Malformed == "" {
		t.Fatalf("memory %+v advice %+v", m, adv)
	}
	if rps, _ := h.rec.of(agent.RoleReplanner); len(rps) != 0 || m.Replans != 0 {
		t.Fatal("a malformed answer acted as replan")
	}
}

// The Doctor's stop, with attempts left: the run halts at the last good
// commit, counting only the attempts that ran.
func TestRecoveryDoctorStopHaltsAtTheLastGoodCommit(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "it broke")+failN(2, 2, "it broke differently, somewhere else entirely")+okN(2, 3)+`
doctor:
  - answer: '{"action":"stop","confidence":0.9,"category":"agent_gave_up","rationale":"the task cannot be done as planned"}'
`)
	cfg := on()
	cfg.Limits.MaxPhaseAttempts = 3
	res, err := h.start(twoPhasePlan, cfg)
	s := mustDone(t, res, err, state.RunHalted)
	if ps := s.Progress.Phases[1]; ps.Attempt != 2 || ps.Status != state.PhaseFailed {
		t.Fatalf("phase 2: attempt %d, %v", ps.Attempt, ps.Status)
	}
	haltedWithRecords(t, h, s)
	if devs, _ := h.rec.of(agent.RoleDeveloper); len(devs) != 3 {
		t.Fatalf("%d developer sessions, want 3 (no attempt after the stop)", len(devs))
	}
	if !strings.Contains(s.Errors[len(s.Errors)-1], "phase 2 halted after 2 attempt(s)") {
		t.Fatalf("errors %q", s.Errors)
	}
}

// haltedWithRecords fails unless halted run s left HEAD at the commit of
// its decision records, whose parent is the last good commit (phase 1's)
// and which adds the records and nothing else.
func haltedWithRecords(t *testing.T, h *harness, s state.ExecutionState) {
	t.Helper()
	if got := h.git("rev-parse", "HEAD~1"); got != s.Progress.Phases[0].PostCommit {
		t.Fatalf("HEAD~1 %s, want phase 1's commit", got)
	}
	dir := path.Join(s.Run.ExecDir, "recovery") + "/"
	files := strings.Fields(h.git("diff", "--name-only", "HEAD~1", "HEAD"))
	if len(files) == 0 {
		t.Fatal("the records' commit adds nothing")
	}
	for _, f := range files {
		if !strings.HasPrefix(f, dir) {
			t.Fatalf("the records' commit holds %s, not only %s", f, dir)
		}
	}
}

// Seed 003's Doctor table (issue 37 item 6): a test failure is of a
// high-risk category, so its Doctor is the strong one from the first
// call; with high_risk_categories emptied it is the cheap one, as before.
func TestRecoveryHighRiskFailureGetsTheStrongDoctor(t *testing.T) {
	for _, c := range []struct {
		name, tier, model string
		high              *[]string
	}{
		{"default", "strong", "large", nil},
		{"no high-risk categories", "cheap", "small", &[]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/a")+`
  - phase: 2
    attempt: 2
    actions:
      - run: 'printf -- "--- FAIL: TestParse (0.00s)\n    parse_test.go:7: Parse(\"x\") panicked\nFAIL\n" >&2; exit 1'`+okN(2, 3)+`
doctor:
  - phase: 2
    tier: `+c.tier+`
    answer: '{"action":"retry_with_hint","confidence":0.9,"category":"test_failure","rationale":"r","hint":"guard the parse"}'
`)
			cfg := on()
			cfg.Limits.MaxPhaseAttempts = 3
			cfg.Recovery.HighRiskCategories = c.high
			cfg.Agents.Doctor = state.AgentConfig{Driver: "llm", Model: "small", StrongModel: "large"}
			res, err := h.start(twoPhasePlan, cfg)
			s := mustDone(t, res, err, state.RunCompleted)
			docs, _ := h.rec.of(agent.RoleDoctor)
			if len(docs) != 1 || docs[0].Tier != c.tier || docs[0].Model != c.model {
				t.Fatalf("doctor sessions %+v, want one %s (%s)", docs, c.tier, c.model)
			}
			if m := recoveryOf(t, s).Memory; m.Phase(1).Failures[1].Category != recovery.CatTestFailure {
				t.Fatalf("failures %+v", m.Phase(1).Failures)
			}
		})
	}
}

// Seed 003's fatal error types (issue 37 item 6): a failure that a
// recovery.fatal rule names wrong_tech_stack is not retried, replanned or
// shown to the Doctor: the run asks the human after its first attempt.
func TestRecoveryFatalErrorTypeAsksTheHumanAtOnce(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "this repository is a Rails app; the plan assumes Django")+okN(2, 2)+`
replanner:
  - phase: 2
    answer: `+accepted+`
doctor:
  - answer: '{"action":"retry_with_hint","confidence":0.9,"category":"test_failure","rationale":"r","hint":"h"}'
`)
	cfg := on()
	cfg.Recovery.Fatal = []state.FatalPattern{{Name: "wrong_tech_stack", Pattern: "the plan assumes Django"}}
	res, err := h.start(twoPhasePlan, cfg)
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	rs := recoveryOf(t, res.State)
	if q := rs.Question; q == nil || q.Decision != "needs_human" || q.Attempt != 1 || !strings.Contains(q.Why, "fatal error type wrong_tech_stack") {
		t.Fatalf("question %+v", rs.Question)
	}
	rps, _ := h.rec.of(agent.RoleReplanner)
	docs, _ := h.rec.of(agent.RoleDoctor)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if len(rps) != 0 || len(docs) != 0 || len(devs) != 2 {
		t.Fatalf("replanner %d, doctor %d, developer %d sessions; want 0, 0, 2 (phase 1, phase 2 attempt 1)", len(rps), len(docs), len(devs))
	}
}

// The Doctor's diagnosis names a fatal error type: whatever it advised,
// the run asks the human, and the question says which type. The
// Doctor's prompt lists the types.
func TestRecoveryDoctorDiagnosingAFatalTypeAsksTheHuman(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "GET /v2/items: 404")+failN(2, 2, "GET /v2/items: 404 again")+okN(2, 3)+`
doctor:
  - answer: '{"action":"retry_with_hint","confidence":0.9,"category":"api_contract_wrong","rationale":"the server has no /v2","hint":"use /v1"}'
`)
	cfg := on()
	cfg.Limits.MaxPhaseAttempts = 3
	cfg.Recovery.MaxReplansPerRun = new(int) // no replan, so the Doctor is asked
	res, err := h.start(twoPhasePlan, cfg)
	if err != nil || res.Status != graph.Interrupted {
		t.Fatalf("run: %v %v, want interrupted", res.Status, err)
	}
	rs := recoveryOf(t, res.State)
	if q := rs.Question; q == nil || q.Decision != "needs_human" || !strings.Contains(q.Why, "fatal error type api_contract_wrong (advised retry_with_hint)") {
		t.Fatalf("question %+v", rs.Question)
	}
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || !strings.Contains(docs[0].Prompt, "wrong_tech_stack, schema_mismatch, api_contract_wrong") {
		t.Fatalf("doctor sessions %+v", docs)
	}
	if devs, _ := h.rec.of(agent.RoleDeveloper); len(devs) != 3 {
		t.Fatalf("%d developer sessions, want 3: no attempt after the diagnosis", len(devs))
	}
}
