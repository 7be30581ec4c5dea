package recovery

import "testing"

// TestChooseTierCountsOnlyAnsweredReplans: a reserved replan is budget
// spent, not a replan. One that is still pending, was cut off twice by a
// crash or answered with no revision does not make the phase's failure
// complex; one that answered with a revision does.
func TestChooseTierCountsOnlyAnsweredReplans(t *testing.T) {
	cfg := mustConfig(t, Config{HighRisk: []Category{}}) // test_failure in no risk list: the history decides
	fresh := func() (Memory, Call) {
		m := failN(t, Memory{}, 0, 2, testFail, cfg) // one category, 2 < ComplexAttempts
		m, call, err := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m, call
	}
	pending, _ := fresh()
	abandoned, _ := fresh()
	abandoned, _, _ = RetryPending(roundTrip(t, abandoned))
	abandoned, _, _ = RetryPending(roundTrip(t, abandoned))
	noRevision, call := fresh()
	noRevision, err := CompleteReplan(noRevision, call.ID, ReplanNoRevision)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]Memory{"pending": pending, "abandoned": abandoned, "no revision": noRevision} {
		if m.Phase(0).Replans != 1 || m.Replans != 1 {
			t.Fatalf("%s: the reservation is not counted against the budget: %+v", name, m)
		}
		if got := ChooseTier(m, 0, cfg); got != TierCheap {
			t.Errorf("%s replan: ChooseTier = %s, want cheap (no replan happened)", name, got)
		}
	}
	for _, out := range []ReplanOutcome{ReplanRefused, ReplanAccepted} {
		m, call := fresh()
		if m, err = CompleteReplan(m, call.ID, out); err != nil {
			t.Fatal(err)
		}
		if got := ChooseTier(m, 0, cfg); got != TierStrong {
			t.Errorf("%s replan: ChooseTier = %s, want strong (replanned already)", out, got)
		}
	}
}

// TestCompleteReplanCounts: what each outcome counts. The reservation
// stays the budget spent whatever the answer.
func TestCompleteReplanCounts(t *testing.T) {
	cfg := mustConfig(t, Config{})
	cases := []struct {
		out                ReplanOutcome
		replanned, accepts int
		name               string
	}{
		{ReplanNoRevision, 0, 0, "no_revision"},
		{ReplanRefused, 1, 0, "refused"},
		{ReplanAccepted, 1, 1, "accepted"},
	}
	for _, c := range cases {
		m := failN(t, Memory{}, 0, 2, testFail, cfg)
		m, call, _ := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
		m, err := CompleteReplan(m, call.ID, c.out)
		if err != nil {
			t.Fatal(err)
		}
		p := m.Phase(0)
		if c.out.String() != c.name || p.Replans != 1 || m.Replans != 1 || p.Replanned != c.replanned || p.ReplansAccepted != c.accepts || m.Pending != nil {
			t.Errorf("%s: phase %+v, run replans %d", c.out, p, m.Replans)
		}
		if r, a := m.Replanned(); r != c.replanned || a != c.accepts {
			t.Errorf("%s: Memory.Replanned = %d, %d", c.out, r, a)
		}
		if got := roundTrip(t, m); got.Phase(0).ReplansAccepted != c.accepts {
			t.Errorf("%s: accepted replans lost in JSON", c.out)
		}
	}
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	m, call, _ := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
	if _, err := CompleteReplan(m, call.ID, ReplanAccepted+1); err == nil {
		t.Error("an invalid outcome was recorded")
	}
}
