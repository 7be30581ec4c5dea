package script

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/story"
)

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
	s, err := Parse("s.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Has(agent.RoleSummarizer) {
		t.Fatal("no summarizer entries")
	}
	d := NewDriver(s, Options{})
	rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, RunID: "r", Phase: 2, Attempt: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := story.Facts{Decisions: []story.Decision{{Topic: "tts", What: "use google-cloud-tts", Why: "many languages"}}, Commands: []string{"NOT TODO: on-device TTS"},
		Methods: []string{"TTSService.Synthesize(text string) ([]byte, error)"}, Dependencies: []string{"google-cloud-tts"},
		Requirements: []string{"Reminders must also be spoken aloud."}, Recommendations: []string{"watch latency"}}
	if !reflect.DeepEqual(rep.Story, want) {
		t.Errorf("Story = %+v, want %+v", rep.Story, want)
	}
	sum, err := d.Run(context.Background(), agent.Session{Role: agent.RoleSummarizer, RunID: "r", Phase: 2, Dir: t.TempDir()})
	if err != nil || sum.Status != agent.StatusCompleted || sum.Output != "## Story so far\n- google-cloud-tts\n" {
		t.Errorf("summarizer: %v %+v", err, sum)
	}
	sum, err = d.Run(context.Background(), agent.Session{Role: agent.RoleSummarizer, RunID: "r", Phase: 3, Dir: t.TempDir()})
	if err != nil || sum.Status != agent.StatusFailed || sum.Error != "out of tokens" {
		t.Errorf("failing summarizer: %v %+v", err, sum)
	}
	for _, bad := range []struct{ y, want string }{
		{"developer:\n  - decisions: [{why: x}]\n", "needs what"},
		{"developer:\n  - methods: [{name: x}]\n", "methods[0]"},
		{"developer:\n  - decisoins: []\n", `unknown key "decisoins"`},
		{"summarizer:\n  - phase: 1\n", "needs text"},
		{"summarizer:\n  - {phase: 1, text: a, error: b}\n", "exactly one"},
	} {
		if _, err := Parse("s.yaml", []byte(bad.y)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.y, err, bad.want)
		}
	}
}
