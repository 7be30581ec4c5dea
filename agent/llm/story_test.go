package llm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/story"
)

// TestLLMDriverStoryReportAndExpandContext: the developer's final answer
// carries the Task Story's structured report, and expand_context reads an
// earlier phase's records at most twice per phase, each call in the
// session's message stream.
func TestLLMDriverStoryReportAndExpandContext(t *testing.T) {
	for _, p := range []Provider{ProviderOpenAI, ProviderAnthropic} {
		t.Run(string(p), func(t *testing.T) {
			dir := t.TempDir()
			sd := filepath.Join(dir, "docs", "gaffer", "x", "story")
			if err := os.MkdirAll(sd, 0o755); err != nil {
				t.Fatal(err)
			}
			rec := story.Record{Seq: 1, Role: "developer", Phase: 1, Attempt: 1, Facts: story.Facts{Methods: []string{"Clock.Now() time.Time"}}}
			data, err := rec.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sd, rec.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
			final := "Added the alarm.\n```json\n{\"decisions\": [{\"topic\": \"clock\", \"what\": \"inject the clock\", \"why\": \"tests\"}], \"methods\": [\"Alarm.Ring(at time.Time)\"], \"commands\": [\"NOT TODO: use time.Now in Alarm\"], \"dependencies\": [], \"recommendations\": [\"fuzz Ring\"]}\n```"
			tl := newTestLLM(t, p, Config{},
				fakellm.Turn{Calls: []fakellm.Call{call("expand_context", `{"phase":1}`)}, Input: 10, Output: 5},
				fakellm.Turn{Calls: []fakellm.Call{call("expand_context", `{"phase":1}`), call("expand_context", `{"phase":1}`)}, Input: 10, Output: 5},
				fakellm.Turn{Text: final, Input: 10, Output: 5},
			)
			r := tl.run(t, agent.Session{RunID: "r1", Phase: 2, Attempt: 1, Prompt: "Build the alarm.", Dir: dir, StoryDir: "docs/gaffer/x/story"})
			if r.err != nil || r.rep.Status != agent.StatusCompleted {
				t.Fatalf("run: %v, report %+v", r.err, r.rep)
			}
			if !slices.Contains(tl.srv.Requests()[0].Tools, "expand_context") {
				t.Fatalf("expand_context not offered: %v", tl.srv.Requests()[0].Tools)
			}
			res := r.results()
			if len(res) != 3 || res[0].IsError || !strings.Contains(res[0].Text, "Clock.Now() time.Time") || res[1].IsError {
				t.Fatalf("the first two calls must return phase 1's records: %+v", res)
			}
			if !res[2].IsError || !strings.Contains(res[2].Text, "used up") {
				t.Fatalf("the third call for phase 1 must be refused: %+v", res[2])
			}
			if r.rep.Expansions != 2 {
				t.Errorf("Expansions = %d, want 2", r.rep.Expansions)
			}
			want := story.Facts{Decisions: []story.Decision{{Topic: "clock", What: "inject the clock", Why: "tests"}}, Methods: []string{"Alarm.Ring(at time.Time)"},
				Commands: []string{"NOT TODO: use time.Now in Alarm"}, Recommendations: []string{"fuzz Ring"}}
			if !slices.EqualFunc(r.rep.Story.Decisions, want.Decisions, func(a, b story.Decision) bool { return a == b }) ||
				!slices.Equal(r.rep.Story.Methods, want.Methods) || !slices.Equal(r.rep.Story.Commands, want.Commands) {
				t.Errorf("Story = %+v, want %+v", r.rep.Story, want)
			}
			if !strings.Contains(tl.srv.Requests()[0].System, "NOT TODO") {
				t.Errorf("the developer's system prompt does not ask for the story report: %q", tl.srv.Requests()[0].System)
			}
		})
	}
}

func TestLLMDriverNoExpandContextWithoutStory(t *testing.T) {
	tl := newTestLLM(t, ProviderOpenAI, Config{}, fakellm.Turn{Text: "done"})
	r := tl.run(t, agent.Session{RunID: "r1", Phase: 1, Attempt: 1, Prompt: "x", Dir: t.TempDir()})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if slices.Contains(tl.srv.Requests()[0].Tools, "expand_context") {
		t.Fatal("expand_context offered to a session without a story directory")
	}
}
