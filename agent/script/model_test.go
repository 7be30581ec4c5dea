package script

import (
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

// An entry giving model: answers only sessions run with that model, and
// wins over one that does not give it.
func TestPickByModel(t *testing.T) {
	steps := []DeveloperStep{
		{Match: Match{Phase: 2}, Summary: "any model"},
		{Match: Match{Phase: 2, Model: "big"}, Summary: "escalated"},
	}
	for _, c := range []struct {
		model, want string
	}{{"", "any model"}, {"small", "any model"}, {"big", "escalated"}} {
		st, ok := pick(steps, agent.Session{Role: agent.RoleDeveloper, Phase: 2, Attempt: 3, Iteration: 1, Model: c.model})
		if !ok || st.Summary != c.want {
			t.Errorf("model %q: picked %q, want %q", c.model, st.Summary, c.want)
		}
	}
	if _, ok := pick(steps[1:], agent.Session{Role: agent.RoleDeveloper, Phase: 2}); ok {
		t.Error("an entry for model big answered a session without a model")
	}
	if got := (Match{Phase: 2, Model: "big"}).String(); got != "phase 2, model big" {
		t.Errorf("String = %q", got)
	}
}
