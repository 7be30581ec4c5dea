package nodes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// rollbackScript fails phase 2 twice, differently (no replan), and the
// Doctor advises rollback_provider; attempt 3 and phase 3 succeed.
var rollbackScript = phase1OK + failN(2, 1, "provider error: 529 overloaded") + failN(2, 2, "./eval.go:3:9: undefined: parseOperand") +
	okN(2, 3) + phase3OK + `
doctor:
  - phase: 2
    answer: '{"action":"rollback_provider","confidence":0.9,"category":"build_error","rationale":"the small model keeps failing"}'
`

// rollbackConfig is a run whose developer has an other model.
func rollbackConfig() state.RunConfig {
	cfg := on()
	cfg.Agents.Developer = state.AgentConfig{Driver: "llm", Model: "small", EscalationModel: "big"}
	return cfg
}

// sessionModels maps each developer session (phase, attempt) to its model.
func sessionModels(t *testing.T, h *harness) map[[2]int]string {
	t.Helper()
	devs, _ := h.rec.of(agent.RoleDeveloper)
	models := map[[2]int]string{}
	for _, d := range devs {
		models[[2]int{d.Phase, d.Attempt}] = d.Model
	}
	return models
}

// The Doctor's rollback_provider: the developer's failing model is not
// used again in the run; its other model runs the retry and every later
// phase, and the decision record says so.
func TestRecoveryDoctorRollsBackTheDevelopersModel(t *testing.T) {
	h := newHarness(t, rollbackScript)
	res, err := h.start(chainPlan(3), rollbackConfig())
	s := mustDone(t, res, err, state.RunCompleted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || !strings.Contains(docs[0].Prompt, "rollback_provider stops using the developer's model (small)") || !strings.Contains(docs[0].Prompt, `| "rollback_provider"`) {
		t.Fatalf("%d Doctor sessions; the prompt does not offer rollback_provider:\n%s", len(docs), docs[0].Prompt)
	}
	models := sessionModels(t, h)
	if models[[2]int{2, 1}] != "" || models[[2]int{2, 2}] != "" || models[[2]int{2, 3}] != "big" || models[[2]int{3, 1}] != "big" {
		t.Fatalf("session models %v: want the role's model before the rollback, big after it (phase 3 too)", models)
	}
	rs := recoveryOf(t, s)
	if rs.RolledBackTo != "big" || rs.Last == nil || rs.Last.Decision != "rollback_provider" || !strings.Contains(rs.Last.Why, "small is not used again") {
		t.Fatalf("rolled back to %q, last decision %+v", rs.RolledBackTo, rs.Last)
	}
	if v, ok := Recovery(s); !ok || v.RolledBackTo != "big" {
		t.Fatalf("status view %+v", v)
	}
}

// A rollback is kept in the checkpointed state: the checkpoint that
// records it lost, or one of those after it, the resumed run still runs
// the rest with the other model.
func TestRecoveryRollbackSurvivesACrash(t *testing.T) {
	losingEach(t, rollbackScript, rollbackConfig(), []byte("rolled_back_to"), func(k, _ int64, h *harness, res graph.Result[state.ExecutionState], err error) {
		s := mustDone(t, res, err, state.RunCompleted)
		if m := sessionModels(t, h); m[[2]int{3, 1}] != "big" || m[[2]int{2, 3}] != "big" {
			t.Fatalf("checkpoint %d lost: session models %v, want big after the rollback", k, m)
		}
		if rs := recoveryOf(t, s); rs.RolledBackTo != "big" {
			t.Fatalf("checkpoint %d lost: rolled back to %q", k, rs.RolledBackTo)
		}
	})
}

// losingEach runs script's plan of 3 phases once to find the first
// checkpoint whose values hold marker (m), then again from the start
// losing, one at a time, checkpoint m, m+1 and the last but one, each
// resumed (at most 3 times) until it ends; check is given each lost
// checkpoint's number, m, the harness and the run's end.
func losingEach(t *testing.T, script string, cfg state.RunConfig, marker []byte, check func(k, m int64, h *harness, res graph.Result[state.ExecutionState], err error)) {
	t.Helper()
	ref := newHarness(t, script)
	first := ref.firstHolding(marker)
	res, err := ref.start(chainPlan(3), cfg)
	mustDone(t, res, err, state.RunCompleted)
	m, puts := first.Load(), ref.store.puts.Load()
	if m == 0 {
		t.Fatalf("no checkpoint holds %q", marker)
	}
	for _, k := range []int64{m, m + 1, puts - 1} {
		h := newHarness(t, script)
		h.failAt(k)
		res, err := h.start(chainPlan(3), cfg)
		res, err = h.resumeCrashed(k, res, err)
		check(k, m, h, res, err)
	}
}

// Without another model the Doctor cannot choose rollback_provider: its
// prompt says why, and the answer, given anyway, is refused as no
// advice; the phase, its attempts used, stops.
func TestRecoveryRollbackWithoutAnotherModelIsRefused(t *testing.T) {
	h := newHarness(t, rollbackScript)
	cfg := on()
	cfg.Agents.Developer = state.AgentConfig{Driver: "llm", Model: "small"}
	res, err := h.start(chainPlan(3), cfg)
	s := mustDone(t, res, err, state.RunHalted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || !strings.Contains(docs[0].Prompt, "rollback_provider is not available: the developer has no other model to fall back to (set roles.developer.escalation_model") ||
		strings.Contains(docs[0].Prompt, `| "rollback_provider"`) {
		t.Fatalf("the Doctor's prompt does not say rollback_provider is unavailable:\n%s", docs[0].Prompt)
	}
	rs := recoveryOf(t, s)
	if rs.RolledBackTo != "" {
		t.Fatalf("rolled back to %q without another model", rs.RolledBackTo)
	}
	if m := sessionModels(t, h); len(m) != 3 || m[[2]int{2, 3}] != "" {
		t.Fatalf("developer sessions %v: want phase 2's two attempts and no third", m)
	}
	var decisions []string
	for n := 1; n <= rs.Decisions; n++ {
		decisions = append(decisions, readDecision(t, h, s, n).Decision)
	}
	if got := strings.Join(decisions, " "); !strings.Contains(got, "doctor:rollback_provider rollback_provider:refused stuck:stop") {
		t.Fatalf("decisions %q", got)
	}
}

// doctor_actions: [] leaves rollback_provider out: the prompt says so and
// the answer is refused in the Doctor's decision record.
func TestRecoveryDoctorActionsLeaveRollbackOut(t *testing.T) {
	h := newHarness(t, rollbackScript)
	cfg := rollbackConfig()
	none := []string{}
	cfg.Recovery.DoctorActions = &none
	res, err := h.start(chainPlan(3), cfg)
	s := mustDone(t, res, err, state.RunHalted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 1 || !strings.Contains(docs[0].Prompt, "rollback_provider is not available: this run's doctor_actions leave it out") {
		t.Fatalf("prompt:\n%s", docs[0].Prompt)
	}
	rs := recoveryOf(t, s)
	if rs.RolledBackTo != "" {
		t.Fatalf("rolled back to %q", rs.RolledBackTo)
	}
	if d := readDecision(t, h, s, 1); d.Decision != "doctor:none" || !strings.Contains(d.Why, "refused: rollback_provider is not one of this run's doctor_actions") {
		t.Fatalf("first decision %+v", d)
	}
}

// readDecision reads run s's n-th decision record.
func readDecision(t *testing.T, h *harness, s state.ExecutionState, n int) DecisionRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, decisionPath(s, n)))
	if err != nil {
		t.Fatal(err)
	}
	var d DecisionRecord
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// A phase the Doctor escalated fails with the escalation model: its
// rollback_provider drops that model, not the one before it; the
// developer's own model runs the retry and the later phases.
func TestRecoveryRollbackOfAnEscalatedPhaseDropsTheEscalationModel(t *testing.T) {
	h := newHarness(t, phase1OK+failN(2, 1, "provider error: 529 overloaded")+failN(2, 2, "./eval.go:3:9: undefined: parseOperand")+
		failN(2, 3, "the big model timed out mid-answer")+okN(2, 4)+phase3OK+`
doctor:
  - phase: 2
    attempt: 2
    answer: '{"action":"escalate_model","confidence":0.9,"category":"build_error","rationale":"the small model is too weak"}'
  - phase: 2
    attempt: 3
    answer: '{"action":"rollback_provider","confidence":0.9,"category":"agent_gave_up","rationale":"the big model keeps timing out"}'
`)
	res, err := h.start(chainPlan(3), rollbackConfig())
	s := mustDone(t, res, err, state.RunCompleted)
	docs, _ := h.rec.of(agent.RoleDoctor)
	if len(docs) != 2 || !strings.Contains(docs[1].Prompt, "rollback_provider stops using the developer's model (big) for the rest of the run and retries with its other model, small") {
		t.Fatalf("%d Doctor sessions; the second prompt:\n%s", len(docs), docs[len(docs)-1].Prompt)
	}
	models := sessionModels(t, h)
	if models[[2]int{2, 3}] != "big" || models[[2]int{2, 4}] != "small" || models[[2]int{3, 1}] != "small" {
		t.Fatalf("session models %v: want big for the escalated attempt 3, small after the rollback", models)
	}
	rs := recoveryOf(t, s)
	if rs.RolledBackTo != "small" || rs.Last == nil || !strings.Contains(rs.Last.Why, "big is not used again in this run; small from now on") {
		t.Fatalf("rolled back to %q, last decision %+v", rs.RolledBackTo, rs.Last)
	}
}
