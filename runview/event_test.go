package runview

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/nodes"
)

func TestEventLine(t *testing.T) {
	long := strings.Repeat("é", 250)
	for _, c := range []struct {
		name    string
		payload any
		want    string
	}{
		{"review approved", events.Review{Phase: 2, Iteration: 1, Approved: true}, "  review of phase 2 (iteration 1): approved"},
		{"review rejected", events.Review{Phase: 1, Iteration: 3}, "  review of phase 1 (iteration 3): rejected"},
		{"phase finished", events.PhaseFinished{Phase: 1, Attempt: 2, Outcome: "approved"}, "  phase 1 attempt 2: approved"},
		{"run status", events.RunStatus{From: "running", To: "completed"}, "  run r-1: running → completed"},
		{"recovery", events.RecoveryDecision{Phase: 3, Decision: "retry", Why: "tests fail\nmore"}, "  recovery, phase 3: retry — tests fail"},
		{"recovery of a lane", events.RecoveryDecision{Phase: 3, Lane: "b", Decision: "skip", Why: long},
			"  recovery, phase 3 lane b: skip — " + strings.Repeat("é", 200) + " …"},
		{"declared files of a lane", events.DeclaredFiles{Phase: 2, Attempt: 1, Lane: 2, Undeclared: []string{"x.go"}},
			"  phase 2 lane 2 attempt 1: " + firstLineOf(nodesCheck([]string{"x.go"}))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := EventLine("r-1", c.payload)
			if !ok || got != c.want {
				t.Errorf("EventLine = %q, %v; want %q", got, ok, c.want)
			}
		})
	}
	if got, ok := EventLine("r-1", events.AgentUsage{Role: "developer"}); ok || got != "" {
		t.Errorf("EventLine(AgentUsage) = %q, %v; want none", got, ok)
	}
}

// nodesCheck is the files check's own words for undeclared files, as the
// line quotes them.
func nodesCheck(undeclared []string) string {
	return nodes.FilesCheck{Undeclared: undeclared}.String()
}
