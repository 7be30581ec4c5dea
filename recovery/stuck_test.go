package recovery

import (
	"strings"
	"testing"
)

func TestStuck(t *testing.T) {
	cfg := mustConfig(t, Config{})
	costLeft := func(frac float64) Budget { return Budget{MaxCostUSD: 100, SpentUSD: 100 - 100*frac} }
	tokensLeft := func(frac float64) Budget { return Budget{MaxTokens: 1000, SpentTokens: int(1000 * (1 - frac))} }
	// base: a phase that failed twice, no replan, plenty of budget.
	base := Situation{ConsecutiveFailures: 2, RunReplansLeft: true, Iteration: 3, IterationCap: 10, EscalationModel: true}
	with := func(f func(*Situation)) Situation { s := base; f(&s); return s }
	cases := []struct {
		name   string
		s      Situation
		want   StuckDecision
		reason string
	}{
		{"1: ambiguity", with(func(s *Situation) { s.Ambiguous = true }), StuckNeedsHuman, "ambiguous"},
		{"1: approval required", with(func(s *Situation) { s.ApprovalRequired = true }), StuckNeedsHuman, "approval"},
		{"1 before 2: ambiguity at the iteration cap", with(func(s *Situation) { s.Ambiguous = true; s.Iteration = 10 }), StuckNeedsHuman, "ambiguous"},
		{"1 before 3: approval with no budget", with(func(s *Situation) { s.ApprovalRequired = true; s.Budget = costLeft(0) }), StuckNeedsHuman, "approval"},
		{"2: iteration cap reached", with(func(s *Situation) { s.Iteration = 10 }), StuckStop, "iteration cap"},
		{"2: past the cap", with(func(s *Situation) { s.Iteration = 12 }), StuckStop, "iteration cap"},
		{"2 before 3: cap and low budget", with(func(s *Situation) { s.Iteration = 10; s.Budget = costLeft(0.1) }), StuckStop, "iteration cap"},
		{"2: no cap means no stop", with(func(s *Situation) { s.IterationCap = 0; s.Iteration = 1000 }), StuckReplan, "consecutive"},
		{"3: under 20% of the cost budget", with(func(s *Situation) { s.Budget = costLeft(0.15) }), StuckReduceScope, "15%"},
		{"3: under 20% of the token budget", with(func(s *Situation) { s.Budget = tokensLeft(0.1) }), StuckReduceScope, "10%"},
		{"3: budget overspent", with(func(s *Situation) { s.Budget = Budget{MaxCostUSD: 1, SpentUSD: 3} }), StuckReduceScope, "0%"},
		{"3: exactly 20% left is not under", with(func(s *Situation) { s.Budget = costLeft(0.2) }), StuckReplan, "consecutive"},
		{"3: the smaller fraction counts", with(func(s *Situation) {
			s.Budget = Budget{MaxCostUSD: 10, SpentUSD: 1, MaxTokens: 100, SpentTokens: 90}
		}), StuckReduceScope, "10%"},
		{"truncation: twice, no replan yet: split", with(func(s *Situation) { s.Truncations = 2 }), StuckReplan, "split the phase"},
		{"truncation: replanned already: escalate", with(func(s *Situation) { s.Truncations = 2; s.Replans = 1 }), StuckEscalateModel, "cut off by its turn or token limit 2 times"},
		{"truncation: no replan left: escalate", with(func(s *Situation) { s.Truncations = 3; s.RunReplansLeft = false }), StuckEscalateModel, "3 times"},
		{"truncation: nothing left: reduce scope", with(func(s *Situation) { s.Truncations = 2; s.Replans = 1; s.Escalations = 1 }), StuckReduceScope, "reduce the phase's scope"},
		{"truncation: no escalation model: reduce scope", with(func(s *Situation) { s.Truncations = 2; s.Replans = 1; s.EscalationModel = false }), StuckReduceScope, "reduce"},
		{"truncation: once is not the rule", with(func(s *Situation) { s.Truncations = 1; s.Replans = 1; s.Escalations = 1 }), StuckStop, "no recovery"},
		{"truncation after the budget rule", with(func(s *Situation) { s.Truncations = 2; s.Budget = costLeft(0.1) }), StuckReduceScope, "10%"},
		{"4: two failures, no replan", base, StuckReplan, "2 consecutive failures"},
		{"4: one failure is not enough", with(func(s *Situation) { s.ConsecutiveFailures = 1 }), StuckStop, "no recovery"},
		{"4: run replan budget spent", with(func(s *Situation) { s.RunReplansLeft = false }), StuckStop, "no recovery"},
		{"5: replanned, budget above 30%", with(func(s *Situation) { s.Replans = 1; s.Budget = costLeft(0.5) }), StuckEscalateModel, "replanned"},
		{"5: no budget limits count as all left", with(func(s *Situation) { s.Replans = 1 }), StuckEscalateModel, "100%"},
		{"5: exactly 30% left is not above", with(func(s *Situation) { s.Replans = 1; s.Budget = costLeft(0.3) }), StuckStop, "no recovery"},
		{"5: 25% left", with(func(s *Situation) { s.Replans = 1; s.Budget = costLeft(0.25) }), StuckStop, "no recovery"},
		{"5: already escalated", with(func(s *Situation) { s.Replans = 1; s.Escalations = 1 }), StuckStop, "no recovery"},
		{"5 skipped: no escalation model configured", with(func(s *Situation) { s.Replans = 1; s.EscalationModel = false }), StuckStop, "no recovery"},
		{"6: nothing left", Situation{}, StuckStop, "no recovery"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := Stuck(c.s, cfg)
			if got != c.want || !strings.Contains(why, c.reason) {
				t.Errorf("Stuck = %s (%s), want %s (%q)", got, why, c.want, c.reason)
			}
		})
	}
	if len(cases) < 15 {
		t.Fatalf("the issue asks for at least 15 rows, have %d", len(cases))
	}
}

func TestSituationOf(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 3, testFail, cfg)
	m = RecordEscalation(m, 0)
	m, call, _ := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
	m, err := CompleteReplan(m, call.ID, ReplanAccepted)
	if err != nil {
		t.Fatal(err)
	}
	s := SituationOf(m, 0, cfg)
	if s.ConsecutiveFailures != 3 || s.Replans != 1 || s.Escalations != 1 || s.RunReplansLeft {
		t.Errorf("SituationOf = %+v, want 3 failures, 1 replan, 1 escalation and the phase's replan spent", s)
	}
	m.Replans = cfg.MaxReplansPerRun
	if SituationOf(m, 0, cfg).RunReplansLeft {
		t.Error("run replan budget spent, yet RunReplansLeft")
	}
}

// TestStuckAfterAnAbandonedReplan: a replan cut off twice by a crash
// produced no answer. Its budget stays spent, so the phase cannot replan
// again, but it was not "replanned already": the stuck handler stops
// instead of escalating on the strength of a replan that never happened.
func TestStuckAfterAnAbandonedReplan(t *testing.T) {
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	m, call, err := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _, _ = RetryPending(roundTrip(t, m))              // the first crash: made once more
	m, abandoned, again := RetryPending(roundTrip(t, m)) // the second: abandoned
	if again || abandoned.ID != call.ID || m.Pending != nil {
		t.Fatalf("the replan was not abandoned: again=%v pending=%+v", again, m.Pending)
	}
	s := SituationOf(m, 0, cfg)
	if s.Replans != 0 || s.RunReplansLeft {
		t.Fatalf("SituationOf = %+v, want no replan counted and none left to reserve", s)
	}
	s.EscalationModel = true
	if d, why := Stuck(s, cfg); d != StuckStop {
		t.Fatalf("Stuck after an abandoned replan = %s (%s), want stop", d, why)
	}
	// A replan that answered counts: the next stuck decision escalates.
	m = failN(t, Memory{}, 0, 2, testFail, cfg)
	m, call, _ = Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
	if m, err = CompleteReplan(m, call.ID, ReplanAccepted); err != nil {
		t.Fatal(err)
	}
	s = SituationOf(m, 0, cfg)
	s.EscalationModel = true
	if d, why := Stuck(s, cfg); d != StuckEscalateModel || !strings.Contains(why, "replanned already") {
		t.Fatalf("Stuck after an answered replan = %s (%s), want escalate_model", d, why)
	}
	// One that produced no revision does not.
	m = failN(t, Memory{}, 0, 2, testFail, cfg)
	m, call, _ = Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
	if m, err = CompleteReplan(m, call.ID, ReplanNoRevision); err != nil {
		t.Fatal(err)
	}
	if s = SituationOf(m, 0, cfg); s.Replans != 0 || m.Pending != nil {
		t.Fatalf("a replan without a revision counted: %+v", s)
	}
}

func TestBudgetWarn(t *testing.T) {
	cfg := mustConfig(t, Config{})
	cases := []struct {
		b    Budget
		want bool
	}{
		{Budget{}, false},
		{Budget{SpentUSD: 100}, false},
		{Budget{MaxCostUSD: 10, SpentUSD: 7.9}, false},
		{Budget{MaxCostUSD: 10, SpentUSD: 8}, true},
		{Budget{MaxTokens: 100, SpentTokens: 85}, true},
	}
	for _, c := range cases {
		if got := c.b.Warn(cfg); got != c.want {
			t.Errorf("%+v.Warn = %v, want %v", c.b, got, c.want)
		}
	}
}

func TestEnumNames(t *testing.T) {
	for d := StuckStop; d <= StuckEscalateModel; d++ {
		b, err := d.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back StuckDecision
		if err := back.UnmarshalText(b); err != nil || back != d {
			t.Errorf("%s does not round trip", d)
		}
	}
	for a := ActionNone; a <= ActionStop; a++ {
		b, _ := a.MarshalText()
		var back Action
		if err := back.UnmarshalText(b); err != nil || back != a {
			t.Errorf("%s does not round trip", a)
		}
	}
	if StuckDecision(9).String() != "StuckDecision(9)" || Action(-1).String() != "Action(-1)" || DriverRateLimit.String() != "rate_limit" || CatNone.String() != "none" {
		t.Error("String of an out-of-range value")
	}
}

// TestSituationOfCountsTruncationsInARow: only the failures at the end
// of the phase's history that were cut off by a limit count.
func TestSituationOfCountsTruncationsInARow(t *testing.T) {
	cfg := mustConfig(t, Config{})
	turns := Input{Driver: DriverTurnLimit, DriverError: "the session used all its 40 turns"}
	tokens := Input{Driver: DriverTokenLimit, DriverError: "the model stopped at its output token limit"}
	var m Memory
	for i, in := range []Input{turns, testFail, turns, tokens} {
		m, _ = RecordFailure(m, 0, i+1, in, cfg)
	}
	if s := SituationOf(m, 0, cfg); s.Truncations != 2 {
		t.Fatalf("Truncations = %d, want 2 (the last two)", s.Truncations)
	}
	if d, why := Stuck(SituationOf(m, 0, cfg), cfg); d != StuckReplan || !strings.Contains(why, "split") {
		t.Fatalf("Stuck = %s (%s)", d, why)
	}
	m, _ = RecordFailure(m, 0, 5, testFail, cfg)
	if s := SituationOf(m, 0, cfg); s.Truncations != 0 {
		t.Fatalf("Truncations = %d after a test failure, want 0", s.Truncations)
	}
}
