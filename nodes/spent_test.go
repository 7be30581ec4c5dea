package nodes

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

func intp(n int) *int { return &n }

// A run stopped because a recovery budget ran out says which one, its
// numbers and the key to raise: in the stuck:stop decision (record,
// event, log) and at the end of the run's halt message.
func TestRecoveryStopNamesTheSpentBudget(t *testing.T) {
	cases := []struct {
		name   string
		script string
		tune   state.RecoveryTuning
		model  string // the escalation model
		want   string
	}{
		{"max_replans_per_run 0: the repeated failure is not replanned",
			phase1OK + goFail(1, "12", "/tmp/a1") + goFail(2, "57", "/tmp/a2") + acceptedReplan,
			state.RecoveryTuning{MaxReplansPerRun: intp(0)}, "",
			"no recovery left: replans 0 of max_replans_per_run 0 (raise it under recovery: in gaffer.yaml)"},
		{"max_doctor_calls_per_phase 1: the Doctor was asked once",
			phase1OK + failN(2, 1, "the parser rejects the input") + failN(2, 2, "a different failure, somewhere else in the evaluator entirely") +
				failN(2, 3, "and a third one, in the printer this time, nothing alike") + `
doctor:
  - phase: 2
    answer: '{"action":"retry_with_hint","confidence":0.9,"category":"agent_gave_up","rationale":"r","hint":"look closer"}'
`,
			state.RecoveryTuning{MaxDoctorCallsPerPhase: intp(1)}, "",
			"no recovery left: Doctor calls 1 of max_doctor_calls_per_phase 1 (raise it under recovery: in gaffer.yaml)"},
		{"max_escalations_per_phase 0: replanned, then not escalated",
			phase2FailsThrice() + acceptedReplan,
			state.RecoveryTuning{MaxEscalationsPerPhase: intp(0)}, "big-model",
			"no recovery left: escalations 0 of max_escalations_per_phase 0 (raise it under recovery: in gaffer.yaml)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.script)
			cfg := on()
			cfg.Recovery.RecoveryTuning = c.tune
			cfg.Agents.Developer = state.AgentConfig{Driver: "llm", Model: "small", EscalationModel: c.model}
			res, err := h.start(twoPhasePlan, cfg)
			s := mustDone(t, res, err, state.RunHalted)
			rs := recoveryOf(t, s)
			if rs.Last == nil || rs.Last.Decision != "stuck:stop" || rs.Last.Why != c.want {
				t.Fatalf("last decision %+v\nwant stuck:stop: %s", rs.Last, c.want)
			}
			last := s.Errors[len(s.Errors)-1]
			if !strings.HasPrefix(last, "phase 2 halted after ") || !strings.HasSuffix(last, "; recovery: "+c.want) {
				t.Fatalf("halt message %q\nwant it to end with the budget: %s", last, c.want)
			}
			if strings.Contains(last, "\n") {
				t.Fatalf("halt message on more than one line: %q", last)
			}
			if rps, _ := h.rec.of(agent.RoleReplanner); c.tune.MaxReplansPerRun != nil && len(rps) != 0 {
				t.Fatalf("%d replanner sessions with max_replans_per_run 0", len(rps))
			}
		})
	}
}

// A replan that answered with no revision spent the phase's replan
// budget: the replan event says no_revision (gaffer_replans_total's
// outcome), status counts no replan, and the stop names the budget.
func TestRecoveryReplanWithoutRevisionSpendsThePhaseBudget(t *testing.T) {
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/n1")+goFail(2, "57", "/tmp/n2")+`
replanner:
  - phase: 2
    answer: 'not the JSON asked for'
`)
	var outcomes []string
	unsub := h.runner.Subscribe(func(e graph.Event) {
		if p, ok := e.Payload.(events.Replan); ok && e.Kind == graph.Custom {
			outcomes = append(outcomes, p.Outcome)
		}
	})
	defer unsub()
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunHalted)
	if len(outcomes) != 1 || outcomes[0] != "no_revision" {
		t.Fatalf("replan events %q, want one no_revision", outcomes)
	}
	if v, ok := Recovery(s); !ok || v.Replans != 0 || v.ReplansReserved != 1 {
		t.Fatalf("status recovery %+v", v)
	}
	const why = "no recovery left: replans 1 of max_replans_per_phase 1 (raise it under recovery: in gaffer.yaml)"
	if rs := recoveryOf(t, s); rs.Last == nil || rs.Last.Decision != "stuck:stop" || rs.Last.Why != why {
		t.Fatalf("last decision %+v, want stuck:stop: %s", rs.Last, why)
	}
	if last := s.Errors[len(s.Errors)-1]; !strings.HasSuffix(last, "; recovery: "+why) {
		t.Fatalf("halt message %q", last)
	}
}
