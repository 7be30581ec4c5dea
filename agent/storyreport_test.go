package agent

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/story"
)

func TestParseFacts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		want story.Facts
	}{
		{"fenced, with prose", "Done: added TTS.\n\n```json\n{\"decisions\": [{\"topic\": \"tts\", \"what\": \"use google-cloud-tts\", \"why\": \"languages\"}], \"methods\": [\"TTS.Say(text string) error\"], \"dependencies\": [\"google-cloud-tts\"], \"commands\": [\"NOT TODO: on-device TTS\"], \"recommendations\": [\"watch latency\"]}\n```\n", true,
			story.Facts{Decisions: []story.Decision{{Topic: "tts", What: "use google-cloud-tts", Why: "languages"}}, Methods: []string{"TTS.Say(text string) error"},
				Dependencies: []string{"google-cloud-tts"}, Commands: []string{"NOT TODO: on-device TTS"}, Recommendations: []string{"watch latency"}}},
		{"a decision as a string, wrong types left out", `{"decisions": ["keep it simple", 3], "methods": "not a list", "dependencies": [" x ", ""]}`, true,
			story.Facts{Decisions: []story.Decision{{What: "keep it simple"}}, Dependencies: []string{"x"}}},
		{"an unrelated object first", `{"approved": true} then {"commands": ["TODO: docs"]}`, true, story.Facts{Commands: []string{"TODO: docs"}}},
		{"no object", "I changed calc.go and ran the tests.", false, story.Facts{}},
		{"an object without story fields", `{"approved": true}`, false, story.Facts{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseFacts(tc.in)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseFacts = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestCLIDriverParsesStoryReport: a CLI agent's final message (Claude's
// JSON result) yields the structured report for a developer session.
func TestCLIDriverParsesStoryReport(t *testing.T) {
	final := "Wrote it.\n```json\n{\"methods\": [\"Queue.Push(v int)\"], \"commands\": [\"NOT TODO: a lock-free queue\"], \"dependencies\": [\"golang.org/x/sync\"]}\n```"
	js := `{"type":"result","subtype":"success","is_error":false,"result":` + strconvQuote(final) + `,"session_id":"s1"}`
	d := newCLI(t, CLIOptions{Template: CLITemplate{Command: []string{"printf", "%s", js}, Output: OutputClaudeJSON}})
	for _, role := range []Role{RoleDeveloper, RoleReviewer} {
		rep, err := d.Run(context.Background(), Session{Role: role, RunID: "r", Phase: 1, Attempt: 1, Prompt: "p", Dir: gitRepo(t)})
		if err != nil || rep.Status != StatusCompleted {
			t.Fatalf("%s: %v %+v", role, err, rep)
		}
		want := story.Facts{Methods: []string{"Queue.Push(v int)"}, Commands: []string{"NOT TODO: a lock-free queue"}, Dependencies: []string{"golang.org/x/sync"}}
		if role == RoleReviewer {
			want = story.Facts{}
		}
		if !reflect.DeepEqual(rep.Story, want) {
			t.Errorf("%s: Story = %+v, want %+v", role, rep.Story, want)
		}
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestScriptDriverStoryReport: a developer entry's story keys come back in
// the report, a summarizer entry answers the summarizer, and the schema
// stays strict about the new keys.
func TestScriptDriverStoryReport(t *testing.T) {
	const y = `developer:
  - phase: 2
    summary: Added TTS.
    decisions:
      - {topic: tts, what: use google-cloud-tts, why: many languages}
    commands: ["NOT TODO: on-device TTS"]
    methods: ["TTSService.Synthesize(text string) ([]byte, error)"]
    dependencies: [google-cloud-tts]
    requirements: ["Reminders must also be spoken aloud."]
    recommendations: [watch latency]
summarizer:
  - phase: 2
    text: "## Story so far\n- google-cloud-tts\n"
  - phase: 3
    error: out of tokens
`
	s, err := ParseScript("s.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Has(RoleSummarizer) {
		t.Fatal("no summarizer entries")
	}
	d := NewScriptDriver(s, ScriptOptions{})
	rep, err := d.Run(context.Background(), Session{Role: RoleDeveloper, RunID: "r", Phase: 2, Attempt: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := story.Facts{Decisions: []story.Decision{{Topic: "tts", What: "use google-cloud-tts", Why: "many languages"}}, Commands: []string{"NOT TODO: on-device TTS"},
		Methods: []string{"TTSService.Synthesize(text string) ([]byte, error)"}, Dependencies: []string{"google-cloud-tts"},
		Requirements: []string{"Reminders must also be spoken aloud."}, Recommendations: []string{"watch latency"}}
	if !reflect.DeepEqual(rep.Story, want) {
		t.Errorf("Story = %+v, want %+v", rep.Story, want)
	}
	sum, err := d.Run(context.Background(), Session{Role: RoleSummarizer, RunID: "r", Phase: 2, Dir: t.TempDir()})
	if err != nil || sum.Status != StatusCompleted || sum.Output != "## Story so far\n- google-cloud-tts\n" {
		t.Errorf("summarizer: %v %+v", err, sum)
	}
	sum, err = d.Run(context.Background(), Session{Role: RoleSummarizer, RunID: "r", Phase: 3, Dir: t.TempDir()})
	if err != nil || sum.Status != StatusFailed || sum.Error != "out of tokens" {
		t.Errorf("failing summarizer: %v %+v", err, sum)
	}
	for _, bad := range []struct{ y, want string }{
		{"developer:\n  - decisions: [{why: x}]\n", "needs what"},
		{"developer:\n  - methods: [{name: x}]\n", "methods[0]"},
		{"developer:\n  - decisoins: []\n", `unknown key "decisoins"`},
		{"summarizer:\n  - phase: 1\n", "needs text"},
		{"summarizer:\n  - {phase: 1, text: a, error: b}\n", "exactly one"},
	} {
		if _, err := ParseScript("s.yaml", []byte(bad.y)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.y, err, bad.want)
		}
	}
}
