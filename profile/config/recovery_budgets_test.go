package config

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The recovery thresholds and budgets: set in a profile's recovery
// section, merged field by field over the default profile (an explicit 0
// is a value, not "unset"), and printed with the defaults by WriteShow.
func TestRecoveryBudgetsLoadAndMerge(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte(`
profiles:
  default:
    recovery:
      max_replans_per_run: 3
      trigger_threshold: 3
      budget_warn_at: 0.5
  strict:
    recovery: {max_replans_per_run: 0, max_doctor_calls_per_run: 0, similarity_threshold: 0.9}
  off:
    recovery: {enabled: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Effective("default")
	if err != nil {
		t.Fatal(err)
	}
	r := d.Recovery
	if r.MaxReplansPerRun == nil || *r.MaxReplansPerRun != 3 || *r.TriggerThreshold != 3 || *r.BudgetWarnAt != 0.5 || r.MaxReplansPerPhase != nil {
		t.Errorf("default: %+v", r.RecoveryTuning)
	}
	s, err := c.Effective("strict")
	if err != nil {
		t.Fatal(err)
	}
	r = s.Recovery
	if r.MaxReplansPerRun == nil || *r.MaxReplansPerRun != 0 || *r.MaxDoctorCallsPerRun != 0 || *r.SimilarityThreshold != 0.9 ||
		*r.TriggerThreshold != 3 || *r.BudgetWarnAt != 0.5 || r.MaxHintsKept != nil {
		t.Errorf("strict (over default): %+v", r.RecoveryTuning)
	}

	var buf bytes.Buffer
	if err := WriteShow(&buf, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"max_replans_per_run: 0\n", "max_doctor_calls_per_run: 0\n", "trigger_threshold: 3\n", "max_replans_per_phase: 1\n", "max_tail_runes: 4000\n", "escalate_above: 0.3\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, buf.String())
		}
	}
	if s.Recovery.MaxReplansPerPhase != nil {
		t.Error("WriteShow changed the profile")
	}
	*s.Recovery.TriggerThreshold = 9
	if again, _ := c.Effective("strict"); *again.Recovery.TriggerThreshold != 3 {
		t.Error("an effective profile shares its recovery settings with the file's")
	}
	off, _ := c.Effective("off")
	buf.Reset()
	if err := WriteShow(&buf, off); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "max_replans_per_phase") || !strings.Contains(buf.String(), "enabled: false") {
		t.Errorf("recovery off shows the defaults:\n%s", buf.String())
	}
}

// A bad threshold or budget is refused at load, on its line, naming the
// key and the fix.
func TestRecoveryBudgetsAreCheckedOnLoad(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"negative", "profiles:\n  p:\n    recovery:\n      max_replans_per_run: -1\n",
			"gaffer.yaml:4: recovery.max_replans_per_run must not be negative, got -1 (0 or more; leave it out for the default 5)"},
		{"fraction", "profiles:\n  p:\n    recovery:\n      budget_warn_at: 1.5\n",
			"gaffer.yaml:4: recovery.budget_warn_at must be a fraction from 0 to 1, got 1.5 (leave it out for the default 0.8)"},
		{"nan", "profiles:\n  p:\n    recovery:\n      similarity_threshold: .nan\n", "gaffer.yaml:4: recovery.similarity_threshold must be a fraction"},
		{"trigger", "profiles:\n  p:\n    recovery:\n      trigger_threshold: 1\n", "gaffer.yaml:4: recovery.trigger_threshold must be at least 2"},
		{"tail", "profiles:\n  p:\n    recovery:\n      max_tail_runes: 0\n", "gaffer.yaml:4: recovery.max_tail_runes must be at least 1"},
		{"kept under trigger", "profiles:\n  default:\n    recovery:\n      trigger_threshold: 8\n",
			"gaffer.yaml:4: recovery.max_failures_kept (6) must be at least recovery.trigger_threshold (8)"},
		{"kept under trigger, merged", "profiles:\n  default:\n    recovery:\n      trigger_threshold: 4\n  p:\n    recovery:\n      max_failures_kept: 3\n",
			"gaffer.yaml:7: recovery.max_failures_kept (3) must be at least recovery.trigger_threshold (4)"},
		{"not an integer", "profiles:\n  p:\n    recovery:\n      max_replans_per_run: lots\n", `profiles.p.recovery.max_replans_per_run must be an integer`},
		{"misspelt", "profiles:\n  p:\n    recovery:\n      max_replan_per_run: 1\n", `gaffer.yaml:4: unknown key "max_replan_per_run" in profiles.p.recovery`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("gaffer.yaml", []byte(c.yaml))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse error = %v, want one line with %q", err, c.want)
			}
		})
	}
	if _, err := Parse("gaffer.yaml", []byte("profiles:\n  p:\n    recovery: {trigger_threshold: 8, max_failures_kept: 8, max_replans_per_phase: 0, reduce_scope_below: 0, max_hints_kept: 0}\n")); err != nil {
		t.Fatalf("good settings: %v", err)
	}
}
