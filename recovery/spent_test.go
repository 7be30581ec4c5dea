package recovery

import (
	"errors"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// tuned is the defaults with t laid over them, as a run's profile sets
// them (a 0 stays 0).
func tuned(t *testing.T, tune state.RecoveryTuning) Config {
	t.Helper()
	cfg, err := Config{}.Apply(tune)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func intp(n int) *int { return &n }

// A stop for want of budget names each budget that stood in the way, with
// its use, its limit and the gaffer.yaml key to raise; one that no budget
// caused stays "no recovery left".
func TestStuckStopNamesTheSpentBudgets(t *testing.T) {
	cfg := mustConfig(t, Config{})
	replanRun := &Limit{What: "replans", Used: 0, Max: 0, Key: "max_replans_per_run"}
	replanPhase := &Limit{What: "replans", Used: 1, Max: 1, Key: "max_replans_per_phase"}
	doctorPhase := &Limit{What: "Doctor calls", Used: 2, Max: 2, Key: "max_doctor_calls_per_phase"}
	base := Situation{ConsecutiveFailures: 2, Iteration: 2, IterationCap: 6}
	with := func(f func(*Situation)) Situation { s := base; f(&s); return s }
	cases := []struct {
		name string
		s    Situation
		want string
	}{
		{"replans per run", with(func(s *Situation) { s.ReplanSpent = replanRun }),
			"no recovery left: replans 0 of max_replans_per_run 0 (raise it under recovery: in gaffer.yaml)"},
		{"replans per phase", with(func(s *Situation) { s.ReplanSpent = replanPhase }),
			"no recovery left: replans 1 of max_replans_per_phase 1 (raise it under recovery: in gaffer.yaml)"},
		{"Doctor calls per phase", with(func(s *Situation) { s.ConsecutiveFailures = 1; s.DoctorSpent = doctorPhase }),
			"no recovery left: Doctor calls 2 of max_doctor_calls_per_phase 2 (raise it under recovery: in gaffer.yaml)"},
		{"Doctor calls per run", with(func(s *Situation) {
			s.ConsecutiveFailures = 1
			s.DoctorSpent = &Limit{What: "Doctor calls", Used: 0, Max: 0, Key: "max_doctor_calls_per_run"}
		}), "no recovery left: Doctor calls 0 of max_doctor_calls_per_run 0 (raise it under recovery: in gaffer.yaml)"},
		{"Doctor infra calls", with(func(s *Situation) {
			s.ConsecutiveFailures = 1
			s.DoctorSpent = &Limit{What: "Doctor infra calls", Used: 3, Max: 3, Key: "max_doctor_infra_per_run"}
		}), "no recovery left: Doctor infra calls 3 of max_doctor_infra_per_run 3 (raise it under recovery: in gaffer.yaml)"},
		{"strong Doctor calls", with(func(s *Situation) {
			s.ConsecutiveFailures = 1
			s.DoctorSpent = &Limit{What: "strong Doctor calls", Used: 5, Max: 5, Key: "max_doctor_strong_per_run"}
		}), "no recovery left: strong Doctor calls 5 of max_doctor_strong_per_run 5 (raise it under recovery: in gaffer.yaml)"},
		{"escalations", with(func(s *Situation) { s.Replans, s.EscalationModel, s.Escalations = 1, true, 1 }),
			"no recovery left: escalations 1 of max_escalations_per_phase 1 (raise it under recovery: in gaffer.yaml)"},
		{"replans and the Doctor", with(func(s *Situation) { s.ReplanSpent, s.DoctorSpent = replanRun, doctorPhase }),
			"no recovery left: replans 0 of max_replans_per_run 0, Doctor calls 2 of max_doctor_calls_per_phase 2 (raise them under recovery: in gaffer.yaml)"},
		{"the Doctor and escalations", with(func(s *Situation) {
			s.Replans, s.EscalationModel, s.Escalations, s.DoctorSpent = 1, true, 1, doctorPhase
		}), "no recovery left: Doctor calls 2 of max_doctor_calls_per_phase 2, escalations 1 of max_escalations_per_phase 1 (raise them under recovery: in gaffer.yaml)"},
		// Not the budget's doing: one failure would not have replanned, a
		// phase replanned already is not replanned again, and without an
		// escalation model (or with 30% of the run budget or less left)
		// there is no escalation to spend.
		{"replan budget, one failure", with(func(s *Situation) { s.ConsecutiveFailures = 1; s.ReplanSpent = replanRun }), "no recovery left"},
		{"replan budget, replanned already", with(func(s *Situation) { s.Replans = 1; s.ReplanSpent = replanPhase }), "no recovery left"},
		{"escalations, no model", with(func(s *Situation) { s.Replans, s.Escalations = 1, 1 }), "no recovery left"},
		{"escalations, low budget", with(func(s *Situation) {
			s.Replans, s.EscalationModel, s.Escalations = 1, true, 1
			s.Budget = Budget{MaxCostUSD: 10, SpentUSD: 7.5}
		}), "no recovery left"},
		{"nothing spent", Situation{}, "no recovery left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, why := Stuck(c.s, cfg)
			if d != StuckStop || why != c.want {
				t.Errorf("Stuck = %s (%s)\nwant stop (%s)", d, why, c.want)
			}
			if got := len(c.s.Spent(cfg)); (got > 0) != (c.want != "no recovery left") {
				t.Errorf("Spent names %d budgets", got)
			}
		})
	}
}

// SituationOf finds the budget that Reserve would refuse, with the same
// numbers, for the replan and for the Doctor call the latest failure asks
// for.
func TestSituationOfFindsTheSpentBudget(t *testing.T) {
	infra := Input{Driver: DriverServer, DriverError: "503 Service Unavailable from the provider, retry later please"}
	cases := []struct {
		name   string
		tune   state.RecoveryTuning
		setup  func(t *testing.T, m Memory, cfg Config) Memory
		replan string // ReplanSpent's String, "" for nil
		doctor string
	}{
		{"defaults, nothing spent", state.RecoveryTuning{}, nil, "", ""},
		{"max_replans_per_run 0", state.RecoveryTuning{MaxReplansPerRun: intp(0)}, nil, "replans 0 of max_replans_per_run 0", ""},
		{"max_replans_per_phase 0", state.RecoveryTuning{MaxReplansPerPhase: intp(0)}, nil, "replans 0 of max_replans_per_phase 0", ""},
		{"the phase's replan answered with no revision", state.RecoveryTuning{}, func(t *testing.T, m Memory, cfg Config) Memory {
			m, call, err := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m, err = CompleteReplan(m, call.ID, ReplanNoRevision); err != nil {
				t.Fatal(err)
			}
			return m
		}, "replans 1 of max_replans_per_phase 1", ""},
		{"the run's replans", state.RecoveryTuning{MaxReplansPerRun: intp(2)}, func(t *testing.T, m Memory, cfg Config) Memory {
			m.Replans = 2 // spent by other phases
			return m
		}, "replans 2 of max_replans_per_run 2", ""},
		{"max_doctor_calls_per_run 0", state.RecoveryTuning{MaxDoctorCallsPerRun: intp(0)}, nil, "", "Doctor calls 0 of max_doctor_calls_per_run 0"},
		{"the phase's Doctor calls", state.RecoveryTuning{}, func(t *testing.T, m Memory, cfg Config) Memory {
			for range 2 {
				m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, hintAnswer, cfg)
			}
			return m
		}, "", "Doctor calls 2 of max_doctor_calls_per_phase 2"},
		{"the Doctor's infra calls", state.RecoveryTuning{MaxDoctorInfraPerRun: intp(1)}, func(t *testing.T, m Memory, cfg Config) Memory {
			m = failN(t, m, 0, 1, infra, cfg)
			m, _ = reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0, Infra: true}, hintAnswer, cfg)
			return m
		}, "", "Doctor infra calls 1 of max_doctor_infra_per_run 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tuned(t, c.tune)
			m := failN(t, Memory{}, 0, 2, testFail, cfg)
			if c.setup != nil {
				m = c.setup(t, m, cfg)
			}
			s := SituationOf(m, 0, cfg)
			if got := limitText(s.ReplanSpent); got != c.replan {
				t.Errorf("ReplanSpent = %q, want %q", got, c.replan)
			}
			if got := limitText(s.DoctorSpent); got != c.doctor {
				t.Errorf("DoctorSpent = %q, want %q", got, c.doctor)
			}
			if s.RunReplansLeft != (c.replan == "") {
				t.Errorf("RunReplansLeft = %v with replan budget %q", s.RunReplansLeft, c.replan)
			}
			// Reserve refuses the same call, as ErrBudgetExhausted.
			_, _, err := Reserve(m, Request{Kind: CallReplan, Phase: 0}, cfg)
			if (c.replan != "") != errors.Is(err, ErrBudgetExhausted) {
				t.Errorf("Reserve(replan) = %v with replan budget %q", err, c.replan)
			}
			_, _, err = Reserve(m, doctorFor(m, 0, cfg), cfg)
			if (c.doctor != "") != errors.Is(err, ErrBudgetExhausted) {
				t.Errorf("Reserve(doctor) = %v with Doctor budget %q", err, c.doctor)
			}
		})
	}
}

func limitText(l *Limit) string {
	if l == nil {
		return ""
	}
	return l.String()
}
