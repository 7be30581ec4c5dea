package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/recovery"
)

func TestRecoveryCounters(t *testing.T) {
	m, reg := newMetrics(t)
	for _, e := range []any{
		events.DoctorCall{Phase: 2, Tier: "cheap", Action: "retry_with_hint"},
		&events.DoctorCall{Phase: 2, Tier: "strong", Action: "replan"},
		events.DoctorCall{Phase: 3, Tier: "cheap", Action: "none"},
	} {
		m.Observe(custom(events.EventDoctorCall, e))
	}
	m.Observe(custom(events.EventReplan, events.Replan{Phase: 2, Outcome: "accepted"}))
	m.Observe(custom(events.EventStuckDecision, events.StuckDecision{Phase: 3, Decision: "stop", Why: "x"}))
	m.Observe(custom(events.EventStuckDecision, events.StuckDecision{Phase: 3, Decision: "reduce_scope"}))
	m.Observe(custom(events.EventBudgetWarning, events.BudgetWarning{Remaining: 0.15}))
	want := `
# HELP gaffer_doctor_calls_total Doctor calls, by tier (cheap, strong) and the action advised (none when the answer did not parse).
# TYPE gaffer_doctor_calls_total counter
gaffer_doctor_calls_total{action="none",tier="cheap"} 1
gaffer_doctor_calls_total{action="replan",tier="strong"} 1
gaffer_doctor_calls_total{action="retry_with_hint",tier="cheap"} 1
# HELP gaffer_replans_total Replanner answers, by outcome: accepted (a revision within the phase's goal anchor), refused (a revision that narrows the phase), no_revision (the replanner failed or gave none). status's replans counts accepted and refused.
# TYPE gaffer_replans_total counter
gaffer_replans_total{outcome="accepted"} 1
gaffer_replans_total{outcome="no_revision"} 0
gaffer_replans_total{outcome="refused"} 0
# HELP gaffer_stuck_decisions_total Stuck handler decisions, by decision (stop, needs_human, reduce_scope, replan, escalate_model).
# TYPE gaffer_stuck_decisions_total counter
gaffer_stuck_decisions_total{decision="reduce_scope"} 1
gaffer_stuck_decisions_total{decision="stop"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gaffer_doctor_calls_total", "gaffer_replans_total", "gaffer_stuck_decisions_total"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.recovery.budget); got != 1 {
		t.Fatalf("budget warnings %v", got)
	}
}

// gaffer_replans_total counts every replanner answer by its outcome, so
// that accepted + refused is status's replans (the replans that answered
// with a revision) and the sum over outcomes is the answers; the series
// exist at zero before the first replan.
func TestReplansByOutcome(t *testing.T) {
	m, reg := newMetrics(t)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP gaffer_replans_total Replanner answers, by outcome: accepted (a revision within the phase's goal anchor), refused (a revision that narrows the phase), no_revision (the replanner failed or gave none). status's replans counts accepted and refused.
# TYPE gaffer_replans_total counter
gaffer_replans_total{outcome="accepted"} 0
gaffer_replans_total{outcome="no_revision"} 0
gaffer_replans_total{outcome="refused"} 0
`), "gaffer_replans_total"); err != nil {
		t.Fatal(err)
	}
	for _, out := range []recovery.ReplanOutcome{recovery.ReplanNoRevision, recovery.ReplanAccepted, recovery.ReplanRefused, recovery.ReplanNoRevision, recovery.ReplanAccepted} {
		m.Observe(custom(events.EventReplan, events.Replan{Phase: 2, Outcome: out.String()}))
	}
	m.Observe(custom(events.EventReplan, &events.Replan{Phase: 3})) // no outcome: no revision
	for o, want := range map[string]float64{"accepted": 2, "refused": 1, "no_revision": 3} {
		if got := testutil.ToFloat64(m.recovery.replans.WithLabelValues(o)); got != want {
			t.Errorf("gaffer_replans_total{outcome=%q} = %v, want %v", o, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.recovery.replans); n != 3 {
		t.Errorf("%d gaffer_replans_total series, want one per outcome", n)
	}
}
