package cli

import (
	"testing"

	"github.com/gaffer-dev/gaffer/nodes"
)

func TestRecoveryText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		in   *nodes.RecoveryView
		want string
	}{
		{"none", nil, ""},
		{"counts", &nodes.RecoveryView{DoctorCalls: 1, Replans: 2}, "1 Doctor call, 2 replans, 0 escalations"},
		{"strong and rollback", &nodes.RecoveryView{DoctorCalls: 3, DoctorStrong: 1, Escalations: 1, RolledBackTo: "m2"},
			"3 Doctor calls (1 strong), 0 replans, 1 escalation, developer rolled back to m2"},
		{"last decision, first line of why", &nodes.RecoveryView{DoctorCalls: 1, Decisions: 1,
			Last: &nodes.DecisionRecord{Phase: 2, Attempt: 3, Lane: "2b", Decision: "doctor:retry", Why: " flaky test\nsecond line"}},
			"1 Doctor call, 0 replans, 0 escalations; last: doctor:retry in phase 2 attempt 3 lane 2b (flaky test)"},
	} {
		if got := recoveryText(c.in); got != c.want {
			t.Errorf("%s: recoveryText = %q, want %q", c.name, got, c.want)
		}
	}
}
