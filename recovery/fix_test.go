package recovery

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestParseExecuteFixAnswer: execute_fix carries its command; without
// one, or a command given with another action, the answer is malformed.
func TestParseExecuteFixAnswer(t *testing.T) {
	a, err := ParseDoctorAnswer(`{"action":"execute_fix","confidence":0.8,"category":"build_error","rationale":"go.sum lacks a module","command":"  go mod tidy  "}`)
	if err != nil || a.Action != ActionExecuteFix || a.Command != "go mod tidy" {
		t.Fatalf("ParseDoctorAnswer = %+v, %v", a, err)
	}
	for name, bad := range map[string]string{
		"no command":            `{"action":"execute_fix","confidence":0.8,"category":"x","rationale":"r"}`,
		"blank command":         `{"action":"execute_fix","confidence":0.8,"category":"x","rationale":"r","command":"  "}`,
		"command of a retry":    `{"action":"retry_with_hint","confidence":0.8,"category":"x","rationale":"r","hint":"h","command":"rm -rf ."}`,
		"command twice":         `{"action":"execute_fix","confidence":0.8,"category":"x","rationale":"r","command":"a","command":"b"}`,
		"command wrong case":    `{"action":"execute_fix","confidence":0.8,"category":"x","rationale":"r","Command":"a"}`,
		"command not a string":  `{"action":"execute_fix","confidence":0.8,"category":"x","rationale":"r","command":["a"]}`,
		"command over the size": `{"action":"execute_fix","confidence":0.8,"category":"x","rationale":"r","command":"` + strings.Repeat("x", maxFieldRunes+1) + `"}`,
	} {
		if a, err := ParseDoctorAnswer(bad); err == nil || a.Action != ActionNone {
			t.Errorf("%s: %+v, %v; want malformed", name, a, err)
		}
	}
}

// TestExecuteFixCap: a phase may be granted max_execute_fix_per_phase
// fixes (default 1): the next answer naming execute_fix is refused as no
// advice, naming the key; other phases keep their own count; 0 allows
// none; a negative cap is a bad config; doctor_actions can leave the
// action out.
func TestExecuteFixCap(t *testing.T) {
	answer := `{"action":"execute_fix","confidence":0.8,"category":"build_error","rationale":"a module is missing","command":"go mod tidy"}`
	cfg := mustConfig(t, Config{MaxDoctorCallsPerPhase: 5})
	if cfg.MaxExecuteFixPerPhase != 1 || !cfg.ActionAllowed(ActionExecuteFix) {
		t.Fatalf("defaults: max_execute_fix_per_phase %d, allowed %v", cfg.MaxExecuteFixPerPhase, cfg.ActionAllowed(ActionExecuteFix))
	}
	m := failN(t, Memory{}, 1, 2, testFail, cfg)
	m, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 1}, answer, cfg)
	if adv.Action != ActionExecuteFix || adv.Command != "go mod tidy" || adv.Refused != "" {
		t.Fatalf("first advice %+v", adv)
	}
	if ok, why := FixLeft(m, 1, cfg); !ok || why != "" {
		t.Fatalf("a fix answered is not one granted: FixLeft = %v %q", ok, why)
	}
	g := GrantFix(m, 1)
	if m.Phase(1).Fixes != 0 || g.Phase(1).Fixes != 1 {
		t.Fatalf("GrantFix changed its input or did not count: %d %d", m.Phase(1).Fixes, g.Phase(1).Fixes)
	}
	if ok, why := FixLeft(g, 1, cfg); ok || !strings.Contains(why, "phase 2 had 1 of its max_execute_fix_per_phase (1) fixes") {
		t.Fatalf("FixLeft after the cap = %v %q", ok, why)
	}
	if ok, _ := FixLeft(g, 0, cfg); !ok {
		t.Fatal("phase 1 counts phase 2's fix")
	}
	g2, adv := reserveDoctor(t, g, Request{Kind: CallDoctor, Phase: 1}, answer, cfg)
	if adv.Action != ActionNone || adv.RefusedAction != ActionExecuteFix || !strings.Contains(adv.Refused, "max_execute_fix_per_phase (1)") || adv.Command != "go mod tidy" {
		t.Fatalf("advice over the cap %+v", adv)
	}
	if g2.Phase(1).DoctorCalls != 2 || g2.Phase(1).Fixes != 1 {
		t.Fatalf("a refused fix is still a call, and no fix: %+v", g2.Phase(1))
	}
	zero := 0
	none, err := Config{}.Apply(state.RecoveryTuning{MaxExecuteFixPerPhase: &zero})
	if err != nil || none.MaxExecuteFixPerPhase != 0 {
		t.Fatalf("max_execute_fix_per_phase: 0 = %d, %v", none.MaxExecuteFixPerPhase, err)
	}
	if ok, _ := FixLeft(Memory{}, 0, none); ok {
		t.Fatal("max_execute_fix_per_phase: 0 grants a fix")
	}
	neg := -1
	if _, err := (Config{}).Apply(state.RecoveryTuning{MaxExecuteFixPerPhase: &neg}); err == nil || !strings.Contains(err.Error(), "max_execute_fix_per_phase is negative") {
		t.Fatalf("negative cap: %v", err)
	}
	only := mustConfig(t, Config{DoctorActions: []string{"rollback_provider"}})
	m3 := failN(t, Memory{}, 0, 2, testFail, only)
	if _, adv := reserveDoctor(t, m3, Request{Kind: CallDoctor, Phase: 0}, answer, only); adv.Action != ActionNone || adv.RefusedAction != ActionExecuteFix ||
		!strings.Contains(adv.Refused, "execute_fix is not one of this run's doctor_actions (rollback_provider)") {
		t.Fatalf("advice with execute_fix left out %+v", adv)
	}
	if d := Defaults(); d.MaxExecuteFixPerPhase == nil || *d.MaxExecuteFixPerPhase != 1 {
		t.Fatalf("Defaults().MaxExecuteFixPerPhase = %v", d.MaxExecuteFixPerPhase)
	}
}
