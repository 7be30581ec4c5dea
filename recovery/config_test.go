package recovery

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

func ptr[T any](v T) *T { return &v }

// Defaults sets every field, and laid over nothing it is Validate's
// defaults: the two tables agree key by key.
func TestDefaultsAreValidatesDefaults(t *testing.T) {
	d := Defaults()
	for _, f := range d.Fields() {
		if !f.Set() {
			t.Errorf("Defaults leaves %s unset", f.Key)
		}
	}
	want, err := Config{}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Config{}.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Apply(Defaults()) = %+v\nwant %+v", got, want)
	}
	if got, err := (Config{}).Apply(state.RecoveryTuning{}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Apply of nothing = %+v, %v", got, err)
	}
}

// An explicit 0 stays 0 (a budget of none), where Validate takes the
// default; a replan then is over budget at once.
func TestApplyKeepsAnExplicitZero(t *testing.T) {
	cfg, err := Config{}.Apply(state.RecoveryTuning{MaxReplansPerRun: ptr(0), MaxDoctorCallsPerPhase: ptr(0), BudgetWarnAt: ptr(0.5), TriggerThreshold: ptr(3)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxReplansPerRun != 0 || cfg.MaxDoctorCallsPerPhase != 0 || cfg.BudgetWarnAt != 0.5 || cfg.TriggerThreshold != 3 || cfg.MaxReplansPerPhase != 1 {
		t.Fatalf("cfg %+v", cfg)
	}
	if _, _, err := Reserve(Memory{}, Request{Kind: CallReplan, Phase: 0}, cfg); !errors.Is(err, ErrBudgetExhausted) || !strings.Contains(err.Error(), "replans per run") {
		t.Fatalf("a replan with max_replans_per_run 0: %v", err)
	}
}

func TestApplyRefusesNonsense(t *testing.T) {
	for _, c := range []struct {
		t    state.RecoveryTuning
		want string
	}{
		{state.RecoveryTuning{MaxReplansPerRun: ptr(-1)}, "max_replans_per_run is negative"},
		{state.RecoveryTuning{SimilarityThreshold: ptr(1.5)}, "similarity_threshold must be in [0, 1]"},
		{state.RecoveryTuning{TriggerThreshold: ptr(0)}, "trigger_threshold must be at least 2"},
		{state.RecoveryTuning{TriggerThreshold: ptr(8)}, "max_failures_kept (6) must be at least trigger_threshold (8)"},
		{state.RecoveryTuning{MaxTailRunes: ptr(0)}, "max_tail_runes must be at least 1"},
	} {
		if _, err := (Config{}).Apply(c.t); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply: %v, want %q", err, c.want)
		}
	}
}
