package recovery

import (
	"errors"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestDoctorActionsConfig: doctor_actions defaults to every optional
// action, an empty list allows none, and a name that is no optional
// action (or one listed twice) is refused with the list to choose from.
func TestDoctorActionsConfig(t *testing.T) {
	def := mustConfig(t, Config{})
	if !def.ActionAllowed(ActionRollbackProvider) || !def.ActionAllowed(ActionRetryWithHint) || def.ActionAllowed(ActionNone) {
		t.Fatalf("default doctor_actions %v", def.DoctorActions)
	}
	none := mustConfig(t, Config{}.WithRules(state.RecoveryRules{DoctorActions: &[]string{}}))
	if none.ActionAllowed(ActionRollbackProvider) || !none.ActionAllowed(ActionStop) {
		t.Fatalf("doctor_actions: [] %v", none.DoctorActions)
	}
	if r := DefaultRules(); r.DoctorActions == nil || strings.Join(*r.DoctorActions, ",") != "rollback_provider,execute_fix,skip_phase" {
		t.Fatalf("DefaultRules().DoctorActions = %v", r.DoctorActions)
	}
	for _, bad := range []struct {
		list []string
		want string
	}{
		{[]string{"reboot"}, `doctor_actions: "reboot" is no optional action of the Doctor (want rollback_provider`},
		{[]string{"stop"}, `"stop" is no optional action`},
		{[]string{"rollback_provider", "rollback_provider"}, `"rollback_provider" is listed twice`},
	} {
		_, err := Config{}.WithRules(state.RecoveryRules{DoctorActions: &bad.list}).Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.list, err, bad.want)
		}
	}
}

// TestDoctorRollbackAnswer: rollback_provider parses; a run whose
// doctor_actions leave it out refuses it as no advice, saying why.
func TestDoctorRollbackAnswer(t *testing.T) {
	answer := `{"action":"rollback_provider","confidence":0.8,"category":"infra","rationale":"the provider keeps answering 529"}`
	a, err := ParseDoctorAnswer(answer)
	if err != nil || a.Action != ActionRollbackProvider {
		t.Fatalf("ParseDoctorAnswer = %+v, %v", a, err)
	}
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	if _, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, answer, cfg); adv.Action != ActionRollbackProvider || adv.Refused != "" {
		t.Fatalf("advice %+v", adv)
	}
	off := mustConfig(t, Config{DoctorActions: []string{}})
	m2, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, answer, off)
	if adv.Action != ActionNone || !strings.Contains(adv.Refused, "rollback_provider is not one of this run's doctor_actions") || adv.Rationale == "" {
		t.Fatalf("advice %+v", adv)
	}
	if m2.DoctorCalls != 1 || m2.Pending != nil {
		t.Fatalf("a refused action is still a call: %+v", m2)
	}
}

// TestDoctorSkipPhaseAnswer: skip_phase parses (with no command), is
// allowed by default and refused as no advice when doctor_actions leave
// it out.
func TestDoctorSkipPhaseAnswer(t *testing.T) {
	answer := `{"action":"skip_phase","confidence":0.7,"category":"test_failure","rationale":"the phase tests a feature the repository dropped"}`
	a, err := ParseDoctorAnswer(answer)
	if err != nil || a.Action != ActionSkipPhase || !a.Action.Optional() {
		t.Fatalf("ParseDoctorAnswer = %+v, %v", a, err)
	}
	if _, err := ParseDoctorAnswer(strings.Replace(answer, `}`, `,"command":"rm -rf ."}`, 1)); !errors.Is(err, ErrMalformedAnswer) {
		t.Fatalf("skip_phase with a command: %v", err)
	}
	cfg := mustConfig(t, Config{})
	m := failN(t, Memory{}, 0, 2, testFail, cfg)
	if _, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, answer, cfg); adv.Action != ActionSkipPhase || adv.Refused != "" {
		t.Fatalf("advice %+v", adv)
	}
	only := mustConfig(t, Config{DoctorActions: []string{"execute_fix"}})
	if _, adv := reserveDoctor(t, m, Request{Kind: CallDoctor, Phase: 0}, answer, only); adv.Action != ActionNone || adv.RefusedAction != ActionSkipPhase ||
		!strings.Contains(adv.Refused, "skip_phase is not one of this run's doctor_actions (execute_fix)") {
		t.Fatalf("advice %+v", adv)
	}
}
