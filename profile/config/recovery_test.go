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
