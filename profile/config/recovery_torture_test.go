package config

import (
	"errors"
	"strings"
	"testing"
)

// Torture: settings a run could not use are refused when the file is
// read (exit 3 at the CLI), not in the middle of a run: a fatal category
// recovery would reject at the first failed attempt, and a budget that
// is not a finite number (which no checkpoint can hold).
func TestRecoveryAndBudgetSettingsAreCheckedOnLoad(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"fatal name not snake_case", "profiles:\n  p:\n    recovery: {fatal: [{name: Out Of Memory, pattern: oom}]}\n", "snake_case"},
		{"fatal name built in", "profiles:\n  p:\n    recovery: {fatal: [{name: test_failure, pattern: oom}]}\n", "built-in"},
		{"fatal name twice", "profiles:\n  p:\n    recovery: {fatal: [{name: oom, pattern: a}, {name: oom, pattern: b}]}\n", "twice"},
		{"cost NaN", "profiles:\n  p:\n    limits: {max_run_cost_usd: .nan}\n", "max_run_cost_usd"},
		{"cost Inf", "profiles:\n  p:\n    limits: {max_run_cost_usd: .inf}\n", "max_run_cost_usd"},
		{"price Inf", "profiles:\n  p:\n    prices:\n      m: {input: .inf, output: 1, cached: 0}\n", "prices"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("gaffer.yaml", []byte(c.yaml))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse error = %v, want one naming %q", err, c.want)
			}
		})
	}
	if _, err := Parse("gaffer.yaml", []byte("profiles:\n  p:\n    recovery: {fatal: [{name: out_of_memory, pattern: 'fatal error: runtime: out of memory'}]}\n")); err != nil {
		t.Fatalf("a good fatal category: %v", err)
	}
}
