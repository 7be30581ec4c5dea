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

// A reviewer entry with second_opinion answers recovery's question about
// a replan's revision (a reviewer session with a revision), and only it;
// the other entries answer the phase's reviews.
func TestScriptReviewerSecondOpinionEntries(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(`
reviewer:
  - phase: 2
    approved: false
    comments: the phase's changes are incomplete
  - phase: 2
    second_opinion: true
    approved: false
    comments: the revision turns Sub into an absolute difference
    usage: {input_tokens: 300, output_tokens: 40}
`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDriver(sc, Options{})
	review, err := agent.ParseReview(mustRun(t, d, agent.Session{Role: agent.RoleReviewer, RunID: "r", Phase: 2, Attempt: 1, Iteration: 1}).Output)
	if err != nil || review.Approved || review.Comments != "the phase's changes are incomplete" {
		t.Errorf("review: %+v, %v", review, err)
	}
	rep := mustRun(t, d, agent.Session{Role: agent.RoleReviewer, RunID: "r", Phase: 2, Attempt: 2, Iteration: 1, Revision: 1})
	second, err := agent.ParseReview(rep.Output)
	if err != nil || second.Approved || !strings.Contains(second.Comments, "absolute difference") || rep.Usage.InputTokens != 300 {
		t.Errorf("second opinion: %+v, %v, usage %+v", second, err, rep.Usage)
	}
	// Phase 3 has no second-opinion entry: the default, a yes.
	if yes, _ := agent.ParseReview(mustRun(t, d, agent.Session{Role: agent.RoleReviewer, RunID: "r", Phase: 3, Attempt: 2, Revision: 1}).Output); !yes.Approved {
		t.Errorf("unscripted second opinion: %+v, want the default approval", yes)
	}
	// A review entry and a second-opinion entry for the same sessions
	// are not duplicates; two of one kind are.
	if _, err := Parse("s.yaml", []byte("reviewer:\n  - {phase: 2, approved: true}\n  - {phase: 2, second_opinion: true, approved: true}\n  - {phase: 2, second_opinion: true, approved: false}\n")); err == nil ||
		!strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "would never be used") {
		t.Errorf("duplicate second-opinion entries: %v", err)
	}
}

func mustRun(t *testing.T, d *Driver, s agent.Session) agent.Report {
	t.Helper()
	rep, err := d.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
