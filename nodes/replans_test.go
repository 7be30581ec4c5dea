package nodes

import (
	"context"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// replanMemory is a Memory whose phase index failed twice the same way
// and holds one reserved replan, then what became of it: "pending" (the
// run was killed during the call), "abandoned" (cut off by two crashes),
// or a recovery.ReplanOutcome's name.
func replanMemory(t *testing.T, index int, what string) recovery.Memory {
	t.Helper()
	cfg, err := recovery.Config{}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	in := recovery.Input{AgentFailed: true, TestOutput: "--- FAIL: TestEval (0.00s)\n    eval_test.go:12: Eval(\"1 + 2\") = 4, want 3\nFAIL"}
	var m recovery.Memory
	for a := 1; a <= 2; a++ {
		m, _ = recovery.RecordFailure(m, index, a, in, cfg)
	}
	m, call, err := recovery.Reserve(m, recovery.Request{Kind: recovery.CallReplan, Phase: index}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	switch what {
	case "pending":
	case "abandoned":
		m, _, _ = recovery.RetryPending(m)
		m, _, _ = recovery.RetryPending(m)
	default:
		out := map[string]recovery.ReplanOutcome{"no_revision": recovery.ReplanNoRevision, "refused": recovery.ReplanRefused, "accepted": recovery.ReplanAccepted}[what]
		if m, err = recovery.CompleteReplan(m, call.ID, out); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestRecoveryViewCountsReplansThatHappened: status's replans are the
// replans that answered with a revision; a reservation (pending, cut off,
// or answered with no revision) is the budget spent, shown apart.
// ReplansByPhase says what became of each phase's replans, so the demo
// does not call a phase replanned when no revision came.
func TestRecoveryViewCountsReplansThatHappened(t *testing.T) {
	cases := []struct {
		what                        string
		replans, reserved, accepted int
		approach                    string
	}{
		{"pending", 0, 1, 0, ""},
		{"abandoned", 0, 1, 0, ""},
		{"no_revision", 0, 1, 0, ""},
		{"refused", 1, 1, 0, ""},
		{"accepted", 1, 1, 1, "loop over the operands"},
	}
	for _, c := range cases {
		rs := recoveryState{Memory: replanMemory(t, 1, c.what)}
		if c.approach != "" {
			rs.Approach = map[int]string{1: c.approach}
		}
		s, err := withRecovery(state.ExecutionState{}, rs)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := Recovery(s)
		if !ok || v.Replans != c.replans || v.ReplansReserved != c.reserved {
			t.Errorf("%s replan: status shows %d replans, %d reserved; want %d, %d", c.what, v.Replans, v.ReplansReserved, c.replans, c.reserved)
		}
		ps := ReplansByPhase(s)
		if len(ps) != 1 || ps[0].Phase != 2 || ps[0].Reserved != 1 || ps[0].Revised != c.replans || ps[0].Accepted != c.accepted ||
			ps[0].Approach != c.approach || len(ps[0].Failures) != 2 {
			t.Errorf("%s replan: ReplansByPhase = %+v", c.what, ps)
		}
	}
}

// A replanner that fails spends the replan budget but is no replan:
// status counts it as reserved only. With its two attempts used and no
// replan left to reserve, the phase halts.
func TestRecoveryFailedReplannerIsNoReplan(t *testing.T) {
	h := newHarness(t, phase1OK+goFail(1, "12", "/tmp/f1")+goFail(2, "13", "/tmp/f2")+`
replanner:
  - phase: 2
    error: the model endpoint went away
`)
	res, err := h.start(twoPhasePlan, on())
	s := mustDone(t, res, err, state.RunHalted)
	rs := recoveryOf(t, s)
	if m := rs.Memory; m.Replans != 1 || m.Phase(1).Replans != 1 || m.Phase(1).Replanned != 0 {
		t.Fatalf("memory %+v: want the replan reserved and not counted as replanned", m)
	}
	if v, _ := Recovery(s); v.Replans != 0 || v.ReplansReserved != 1 {
		t.Fatalf("status shows %d replans, %d reserved; want 0, 1", v.Replans, v.ReplansReserved)
	}
	if ps := ReplansByPhase(s); len(ps) != 1 || ps[0].Revised != 0 || ps[0].Accepted != 0 || ps[0].Approach != "" {
		t.Fatalf("ReplansByPhase = %+v", ps)
	}
}

// A refused (narrowing) revision the human answered with feedback: the
// phase was replanned but no revision was accepted; the approach its
// next attempt carries is the human's.
func TestRecoveryRefusedRevisionIsNotAccepted(t *testing.T) {
	h, _ := askedAboutNarrowing(t)
	res, err := h.runner.Resume(context.Background(), "r-1", graph.WithResume(Answer{Approved: true, Feedback: "keep every case"}))
	s := mustDone(t, res, err, state.RunCompleted)
	if v, _ := Recovery(s); v.Replans != 1 || v.ReplansReserved != 1 {
		t.Fatalf("status shows %d replans, %d reserved; want 1, 1", v.Replans, v.ReplansReserved)
	}
	ps := ReplansByPhase(s)
	if len(ps) != 1 || ps[0].Revised != 1 || ps[0].Accepted != 0 || ps[0].Approach != "The human's answer to narrowing_revision: keep every case" {
		t.Fatalf("ReplansByPhase = %+v", ps)
	}
}
