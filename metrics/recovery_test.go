package metrics

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
	m.Observe(custom(events.EventReplan, events.Replan{Phase: 2}))
	m.Observe(custom(events.EventStuckDecision, events.StuckDecision{Phase: 3, Decision: "stop", Why: "x"}))
	m.Observe(custom(events.EventStuckDecision, events.StuckDecision{Phase: 3, Decision: "reduce_scope"}))
	m.Observe(custom(events.EventBudgetWarning, events.BudgetWarning{Remaining: 0.15}))
	want := `
# HELP gaffer_doctor_calls_total Doctor calls, by tier (cheap, strong) and the action advised (none when the answer did not parse).
# TYPE gaffer_doctor_calls_total counter
gaffer_doctor_calls_total{action="none",tier="cheap"} 1
gaffer_doctor_calls_total{action="replan",tier="strong"} 1
gaffer_doctor_calls_total{action="retry_with_hint",tier="cheap"} 1
# HELP gaffer_replans_total Replanner calls: revisions of a failing phase's approach within its goal anchor.
# TYPE gaffer_replans_total counter
gaffer_replans_total 1
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
