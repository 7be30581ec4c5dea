package demo

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// demoState is a run whose phase 2 failed twice the same way, then had
// a replan reserved with outcome what ("pending", or a
// recovery.ReplanOutcome's name), and whose phase 2 ended with status.
func demoState(t *testing.T, what string, status state.PhaseStatus) state.ExecutionState {
	t.Helper()
	cfg, err := recovery.Config{}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	in := recovery.Input{AgentFailed: true, TestOutput: "--- FAIL: TestEval (0.00s)\n    eval_test.go:12: Eval(\"1 + 2\") = 4, want 3\nFAIL"}
	var m recovery.Memory
	for a := 1; a <= 2; a++ {
		m, _ = recovery.RecordFailure(m, 1, a, in, cfg)
	}
	m, call, err := recovery.Reserve(m, recovery.Request{Kind: recovery.CallReplan, Phase: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rs := map[string]any{}
	if what != "pending" {
		out := map[string]recovery.ReplanOutcome{"no_revision": recovery.ReplanNoRevision, "refused": recovery.ReplanRefused, "accepted": recovery.ReplanAccepted}[what]
		if m, err = recovery.CompleteReplan(m, call.ID, out); err != nil {
			t.Fatal(err)
		}
		if out == recovery.ReplanAccepted {
			rs["approach"] = map[int]string{1: "loop over the operands"}
		}
	}
	rs["memory"] = m
	raw, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	var s state.ExecutionState
	s.Progress.Phases = []state.PhaseState{{Index: 0, Status: state.PhaseCompleted, Attempt: 1}, {Index: 1, Status: status, Attempt: 3}}
	s.Progress.Recovery = raw
	return s
}

// The demo's recovery text says a phase was replanned only when the
// replanner answered with a revision: a reserved replan that was cut off
// or failed is told as such.
func TestDemoRecoveryTellsWhatCameOfTheReplan(t *testing.T) {
	const failed = "\nRecovery: phase 2 failed twice the same way (test_failure: --- FAIL: TestEval (0.00s));\n"
	cases := []struct {
		what   string
		status state.PhaseStatus
		want   string
	}{
		{"pending", state.PhaseRunning, "  a replan was tried, but the replanner gave no revision; the run ended before the phase did.\n"},
		{"no_revision", state.PhaseFailed, "  a replan was tried, but the replanner gave no revision; the run ended before the phase did.\n"},
		{"refused", state.PhaseCompleted, "  replanned, but no revision was accepted; attempt 3 passed.\n"},
		{"accepted", state.PhaseCompleted, "  replanned: the revised approach kept the phase's frozen goal and was accepted, and attempt 3 passed.\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		WriteRecovery(&b, demoState(t, c.what, c.status))
		if b.String() != failed+c.want {
			t.Errorf("%s replan: demo says\n%q\nwant\n%q", c.what, b.String(), failed+c.want)
		}
	}
}
