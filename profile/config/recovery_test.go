package config

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

func TestRecoveryKeys(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte(`
profiles:
  default:
    driver: llm
    model: cheap-1
    provider: {name: openai}
    roles:
      architect: {model: arch-1}
      doctor: {model: doc-1, strong_model: doc-strong}
      developer: {escalation_model: dev-big}
    limits:
      max_run_cost_usd: 2.5
      max_run_tokens: 90000
  off:
    recovery: {enabled: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Effective("default")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Recovery.On() {
		t.Error("recovery is on by default")
	}
	if d := p.Role(agent.RoleDoctor); d.Model != "doc-1" || d.StrongModel != "doc-strong" || d.Driver != DriverLLM {
		t.Errorf("doctor %+v", d)
	}
	if r := p.Role(agent.RoleReplanner); r.Model != "arch-1" {
		t.Errorf("the replanner takes the architect's model: %+v", r)
	}
	if d := p.Role(agent.RoleDeveloper); d.EscalationModel != "dev-big" {
		t.Errorf("developer %+v", d)
	}
	if p.Limits.MaxRunCostUSD != 2.5 || p.Limits.MaxRunTokens != 90000 {
		t.Errorf("limits %+v", p.Limits)
	}
	off, err := c.Effective("off")
	if err != nil {
		t.Fatal(err)
	}
	if off.Recovery.On() {
		t.Error("recovery.enabled: false is off")
	}
	_, err = Parse("gaffer.yaml", []byte("profiles:\n  x:\n    limits: {max_run_cost_usd: -1}\n"))
	if err == nil || !strings.Contains(err.Error(), "max_run_cost_usd") {
		t.Errorf("a negative budget: %v", err)
	}
	_, err = Parse("gaffer.yaml", []byte("profiles:\n  x:\n    recovery: {enable: false}\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "enable"`) {
		t.Errorf("a misspelt key: %v", err)
	}
}

// TestRecoveryRulesKeys: seed 003's rules under recovery: are parsed,
// an empty list is kept as none, and a list naming no category is refused
// at the key with the cause.
func TestRecoveryRulesKeys(t *testing.T) {
	p := effective(t, `
profiles:
  default:
    driver: llm
    model: m
    provider: {name: openai}
    recovery:
      high_risk_categories: [agent_gave_up]
      low_risk_categories: []
      message_similarity_enabled: false
      fatal_error_types: [wrong_database]
      doctor_actions: []
`, "default")
	r := p.Recovery.RecoveryRules
	if r.HighRiskCategories == nil || len(*r.HighRiskCategories) != 1 || (*r.HighRiskCategories)[0] != "agent_gave_up" ||
		r.LowRiskCategories == nil || len(*r.LowRiskCategories) != 0 ||
		r.MessageSimilarityEnabled == nil || *r.MessageSimilarityEnabled ||
		r.FatalErrorTypes == nil || len(*r.FatalErrorTypes) != 1 || (*r.FatalErrorTypes)[0] != "wrong_database" ||
		r.DoctorActions == nil || len(*r.DoctorActions) != 0 {
		t.Fatalf("rules %+v", r)
	}
	var show strings.Builder
	if err := WriteShow(&show, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show.String(), "message_similarity_enabled: false") || !strings.Contains(show.String(), "- wrong_database") {
		t.Errorf("config show lacks the rules:\n%s", show.String())
	}
	for _, bad := range []struct{ yaml, want string }{
		{"high_risk_categories: [logic]", `"logic" is no failure category`},
		{"fatal_error_types: [test_failure]", `"test_failure" is a built-in category`},
		{"low_risk_categories: [infra]\n      high_risk_categories: [infra]", `"infra" is in both`},
		{"doctor_actions: [reboot]", `doctor_actions: "reboot" is no optional action of the Doctor (want rollback_provider`},
		{"doctor_actions: rollback_provider", `doctor_actions must be a list`},
	} {
		_, err := Parse("gaffer.yaml", []byte("profiles:\n  x:\n    recovery:\n      "+bad.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "recovery") {
			t.Errorf("%s: %v, want %q", bad.yaml, err, bad.want)
		}
	}
}
