package script

import (
	"context"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

func TestScriptDoctorAndReplannerEntries(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(`
doctor:
  - phase: 2
    answer: '{"action":"retry_with_hint","confidence":0.5,"category":"test_failure","rationale":"r","hint":"cheap"}'
    usage: {input_tokens: 10, output_tokens: 5, cost_usd: 0.01}
  - phase: 2
    tier: strong
    answer: '{"action":"replan","confidence":0.9,"category":"test_failure","rationale":"r"}'
  - phase: 3
    answer: not json at all
replanner:
  - phase: 2
    answer: '{"approach":"x","tasks":[]}'
`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDriver(sc, Options{})
	run := func(s agent.Session) agent.Report {
		t.Helper()
		rep, err := d.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	cheap := run(agent.Session{Role: agent.RoleDoctor, RunID: "r", Phase: 2, Attempt: 2, Tier: "cheap"})
	if !strings.Contains(cheap.Output, `"hint":"cheap"`) || cheap.Usage.InputTokens != 10 || cheap.Usage.CostUSD != 0.01 {
		t.Errorf("cheap: %+v", cheap)
	}
	if strong := run(agent.Session{Role: agent.RoleDoctor, RunID: "r", Phase: 2, Attempt: 2, Tier: "strong"}); !strings.Contains(strong.Output, "replan") {
		t.Errorf("strong: %+v", strong)
	}
	if bad := run(agent.Session{Role: agent.RoleDoctor, RunID: "r", Phase: 3, Tier: "cheap"}); bad.Output != "not json at all" {
		t.Errorf("the answer is the text as given: %+v", bad)
	}
	if rp := run(agent.Session{Role: agent.RoleReplanner, RunID: "r", Phase: 2, Attempt: 2}); !strings.Contains(rp.Output, "approach") {
		t.Errorf("replanner: %+v", rp)
	}
	if _, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDoctor, RunID: "r", Phase: 9}); err == nil {
		t.Error("an unscripted doctor call is an error, not silence")
	}
	if _, err := Parse("s.yaml", []byte("doctor:\n  - phase: 1\n    tier: huge\n    answer: x\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad tier: %v", err)
	}
	if _, err := Parse("s.yaml", []byte("doctor:\n  - phase: 1\n")); err == nil {
		t.Error("a doctor entry without answer or error")
	}
}
