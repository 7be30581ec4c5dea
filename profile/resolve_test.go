package profile

import (
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent/cliagent"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/profile/config/configtest"
	"github.com/gaffer-dev/gaffer/state"
)

func TestResolveProfile(t *testing.T) {
	env := func(string) string { return "" }
	dir := configtest.Dir(t, "profiles:\n  cc:\n    driver: cli\n    agent: claude\n    agents:\n      claude:\n        env: {ANTHROPIC_AUTH_TOKEN: hunter3}\n")
	_, err := resolveProfile(dir, request{RunSpec: host.RunSpec{Profile: "cc"}}, env)
	if err == nil || host.CodeOf(err) != host.Invalid || !strings.Contains(err.Error(), "agents.claude.env.ANTHROPIC_AUTH_TOKEN") {
		t.Fatalf("a secret in a template's env: %v, want it refused (it would be stored)", err)
	}
	dir = configtest.Dir(t, strings.Replace(strings.Replace(configtest.Profiles, "?api_key=hunter2", "", 1), "env: {ANTHROPIC_AUTH_TOKEN: hunter3}", "env: {FOO: bar}", 1))
	rp, err := resolveProfile(dir, request{}, env)
	if err != nil {
		t.Fatal(err)
	}
	if rp.name != "fast" || rp.agents.Reviewer != (state.AgentConfig{Driver: "llm", Model: "gpt-5-mini",
		CallTimeout: config.DefaultCallTimeout, CallAttempts: config.DefaultCallAttempts, SessionTimeout: config.DefaultSessionTimeout}) || rp.agents.Developer.Model != "gpt-5" {
		t.Errorf("agents = %+v", rp.agents)
	}
	if rp.drivers.Provider != "openai" || rp.drivers.APIKeyEnv != "MY_OPENAI_KEY" || rp.drivers.MaxTurns != 7 ||
		rp.drivers.Prices["gpt-5"].Output != 10 || len(rp.drivers.CLIAgents) != 0 {
		t.Errorf("drivers = %+v", rp.drivers)
	}
	if rp.limits != (state.Limits{MaxTaskReviewIterations: 4, MaxPhaseAttempts: 3, MaxPlanRevisions: 1}) || !rp.skipTDD {
		t.Errorf("limits = %+v, skip TDD %v", rp.limits, rp.skipTDD)
	}
	err = checkKeys(state.RunConfig{Agents: rp.agents, Drivers: rp.drivers}, env)
	if host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "MY_OPENAI_KEY") {
		t.Errorf("checkKeys without the key: %v", err)
	}

	// The flags win over the profile, for every role.
	rp, err = resolveProfile(dir, request{RunSpec: host.RunSpec{Profile: "cc", Model: "claude-opus-4-1"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	if a := rp.agents.Evaluator; a != (state.AgentConfig{Driver: "cli", Model: "claude-opus-4-1", Agent: "claude", SessionTimeout: config.DefaultSessionTimeout}) {
		t.Errorf("evaluator = %+v", a)
	}
	if c := rp.drivers.CLIAgents["claude"]; len(c.Command) == 0 || c.Command[0] != cliagent.BuiltinTemplates()["claude"].Command[0] || rp.drivers.Provider != "" {
		t.Errorf("cli settings = %+v", rp.drivers)
	}
	if _, err := resolveProfile(dir, request{RunSpec: host.RunSpec{Driver: "script"}}, env); host.CodeOf(err) != host.Usage {
		t.Errorf("--driver script without --script: %v", err)
	}
	if _, err := resolveProfile(dir, request{RunSpec: host.RunSpec{Driver: "magic"}}, env); host.CodeOf(err) != host.Usage {
		t.Errorf("--driver magic: %v", err)
	}

	dir = configtest.Dir(t, strings.Replace(configtest.Profiles, "env: {ANTHROPIC_AUTH_TOKEN: hunter3}", "env: {FOO: bar}", 1))
	if _, err := resolveProfile(dir, request{}, env); host.CodeOf(err) != host.Invalid || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a key in the base URL: %v, want it refused without printing it", err)
	}
}

// TestResolveProfileTimeoutsPerRole: a mixed profile (the architect on
// llm, the developer on a CLI agent) stores each role's own timeouts with
// the run: an llm role its call timeout, tries and session limit, a CLI
// role its session limit only (the agent makes its own calls).
func TestResolveProfileTimeoutsPerRole(t *testing.T) {
	env := func(string) string { return "" }
	dir := configtest.Dir(t, `profiles:
  mixed:
    driver: cli
    agent: codex
    timeouts: {session: 45m, call: 2m}
    roles:
      architect: {driver: llm, model: gpt-5, timeouts: {call: 90s, call_attempts: 2}}
      developer: {timeouts: {session: 2h}}
    provider: {name: openai}
`)
	rp, err := resolveProfile(dir, request{RunSpec: host.RunSpec{Profile: "mixed"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		role string
		got  state.AgentConfig
		want state.AgentConfig
	}{
		{"architect", rp.agents.Architect, state.AgentConfig{Driver: "llm", Model: "gpt-5", CallTimeout: 90 * time.Second, CallAttempts: 2, SessionTimeout: 45 * time.Minute}},
		{"replanner", rp.agents.Replanner, state.AgentConfig{Driver: "llm", Model: "gpt-5", CallTimeout: 90 * time.Second, CallAttempts: 2, SessionTimeout: 45 * time.Minute}},
		{"developer", rp.agents.Developer, state.AgentConfig{Driver: "cli", Agent: "codex", SessionTimeout: 2 * time.Hour}},
		{"reviewer", rp.agents.Reviewer, state.AgentConfig{Driver: "cli", Agent: "codex", SessionTimeout: 45 * time.Minute}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %+v\nwant %+v", c.role, c.got, c.want)
		}
	}
}

// resolveProfile carries what the profile sets, and only that, into the
// run's config; recovery off carries nothing.
func TestResolveProfileCarriesRecoveryBudgets(t *testing.T) {
	env := func(string) string { return "" }
	dir := configtest.Dir(t, "profiles:\n  default:\n    recovery: {max_replans_per_run: 0, budget_warn_at: 0.6}\n  off:\n    recovery: {enabled: false, max_replans_per_run: 2}\n")
	rp, err := resolveProfile(dir, request{RunSpec: host.RunSpec{Script: "s.yaml"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	r := rp.recovery
	if r == nil || r.MaxReplansPerRun == nil || *r.MaxReplansPerRun != 0 || r.BudgetWarnAt == nil || *r.BudgetWarnAt != 0.6 || r.MaxReplansPerPhase != nil {
		t.Fatalf("recovery = %+v", r)
	}
	if rp, err = resolveProfile(dir, request{RunSpec: host.RunSpec{Script: "s.yaml", Profile: "off"}}, env); err != nil || rp.recovery != nil {
		t.Fatalf("recovery off: %+v, %v", rp.recovery, err)
	}
}
