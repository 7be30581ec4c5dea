package config

import (
	"testing"
)

// TestIntegerSettings: an integer setting takes an integer in plain
// decimal digits that fits an int; anything else is refused on its line,
// naming the key and the fix, instead of being cut down (1.5 was read as
// 1) or read in another base (010 was read as 8).
func TestIntegerSettings(t *testing.T) {
	cases := []refusal{
		{"fraction in limits", "profiles:\n  p:\n    limits: {max_turns: 1.5}\n",
			`gaffer.yaml:3: profiles.p.limits.max_turns must be an integer, not "1.5"`},
		{"fraction in recovery", "profiles:\n  p:\n    recovery:\n      max_replans_per_run: 1.5\n",
			`gaffer.yaml:4: profiles.p.recovery.max_replans_per_run must be an integer, not "1.5"`},
		{"whole float", "profiles:\n  p:\n    limits: {max_turns: 2.0}\n",
			`gaffer.yaml:3: profiles.p.limits.max_turns must be an integer, not "2.0"`},
		{"exponent", "profiles:\n  p:\n    limits:\n      max_run_tokens: 1e6\n",
			`gaffer.yaml:4: profiles.p.limits.max_run_tokens must be an integer, not "1e6"`},
		{"negative infinity", "profiles:\n  p:\n    recovery: {max_tail_runes: -.inf}\n",
			`gaffer.yaml:3: profiles.p.recovery.max_tail_runes must be an integer, not "-.inf"`},
		{"top level fraction", "max_runs_per_repo: 0.5\n",
			`gaffer.yaml:1: max_runs_per_repo must be an integer, not "0.5"`},
		{"too large", "profiles:\n  p:\n    limits: {max_turns: 99999999999999999999}\n",
			`gaffer.yaml:3: profiles.p.limits.max_turns must be an integer from -9223372036854775808 to 9223372036854775807, not "99999999999999999999"`},
		{"just too large", "max_runs_per_repo: 9223372036854775808\n",
			`gaffer.yaml:1: max_runs_per_repo must be an integer from -9223372036854775808 to 9223372036854775807, not "9223372036854775808"`},
		{"leading zero", "profiles:\n  p:\n    limits: {max_turns: 010}\n",
			`gaffer.yaml:3: profiles.p.limits.max_turns must be an integer in plain decimal digits (no leading 0, 0x, 0o, 0b or _), not "010"`},
		{"hex", "profiles:\n  p:\n    recovery: {trigger_threshold: 0x10}\n",
			`gaffer.yaml:3: profiles.p.recovery.trigger_threshold must be an integer in plain decimal digits (no leading 0, 0x, 0o, 0b or _), not "0x10"`},
		{"underscores", "profiles:\n  p:\n    limits: {max_run_tokens: 1_000_000}\n",
			`gaffer.yaml:3: profiles.p.limits.max_run_tokens must be an integer in plain decimal digits (no leading 0, 0x, 0o, 0b or _), not "1_000_000"`},
		{"through an alias", "profiles:\n  a:\n    limits: {max_turns: &n 1.5}\n  b:\n    limits: {max_turns: *n}\n",
			`gaffer.yaml:3: profiles.a.limits.max_turns must be an integer, not "1.5"`},
	}
	checkRefusals(t, cases)
}

// TestIntegerSettingsKept: integers in plain decimal digits, signed or
// not, are read as written; floats still take integers.
func TestIntegerSettingsKept(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte("max_runs_per_repo: +3\nprofiles:\n  p:\n    limits: {max_turns: 40, max_run_tokens: 9223372036854775807, max_run_cost_usd: 2}\n    recovery: {max_replans_per_run: 0, trigger_threshold: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Effective("p")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxRunsPerRepo() != 3 || p.Limits.MaxTurns != 40 || p.Limits.MaxRunTokens != 9223372036854775807 || p.Limits.MaxRunCostUSD != 2 ||
		*p.Recovery.MaxReplansPerRun != 0 || *p.Recovery.TriggerThreshold != 2 {
		t.Errorf("read %d, %+v, %+v", c.MaxRunsPerRepo(), p.Limits, p.Recovery.RecoveryTuning)
	}
}
