package cliagent

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
	"github.com/gaffer-dev/gaffer/story"
)

// TestCLIDriverParsesStoryReport: a CLI agent's final message (Claude's
// JSON result) yields the structured report for a developer session.
func TestCLIDriverParsesStoryReport(t *testing.T) {
	final := "Wrote it.\n```json\n{\"methods\": [\"Queue.Push(v int)\"], \"commands\": [\"NOT TODO: a lock-free queue\"], \"dependencies\": [\"golang.org/x/sync\"]}\n```"
	js := `{"type":"result","subtype":"success","is_error":false,"result":` + strconvQuote(final) + `,"session_id":"s1"}`
	d := newCLI(t, Options{Template: Template{Command: []string{"printf", "%s", js}, Output: claude.Output}})
	for _, role := range []agent.Role{agent.RoleDeveloper, agent.RoleReviewer} {
		rep, err := d.Run(context.Background(), agent.Session{Role: role, RunID: "r", Phase: 1, Attempt: 1, Prompt: "p", Dir: testkit.GitRepo(t)})
		if err != nil || rep.Status != agent.StatusCompleted {
			t.Fatalf("%s: %v %+v", role, err, rep)
		}
		want := story.Facts{Methods: []string{"Queue.Push(v int)"}, Commands: []string{"NOT TODO: a lock-free queue"}, Dependencies: []string{"golang.org/x/sync"}}
		if role == agent.RoleReviewer {
			want = story.Facts{}
		}
		if !reflect.DeepEqual(rep.Story, want) {
			t.Errorf("%s: Story = %+v, want %+v", role, rep.Story, want)
		}
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
