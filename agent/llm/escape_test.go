package llm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
	"github.com/gaffer-dev/gaffer/story"
)

// writeRecords writes records into the story directory sd and returns
// their file names.
func writeRecords(t *testing.T, sd string, rs ...story.Record) []string {
	t.Helper()
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs {
		data, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sd, r.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, r.Name())
	}
	return names
}

// toolDescription is the description of tool name in an OpenAI chat
// request's raw body.
func toolDescription(t *testing.T, body, name string) string {
	t.Helper()
	var in struct {
		Tools []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	for _, tl := range in.Tools {
		if tl.Function.Name == name {
			return tl.Function.Description
		}
	}
	t.Fatalf("tool %s not offered: %s", name, body)
	return ""
}

// TestLLMDriverExpandContextCostAndCap (issue 37 item 7, seed 004): the
// request offering expand_context names, per earlier phase with records,
// the tokens expanding it would add (bytes/4 of the very text the tool
// returns); the cap of two per phase counts read_file of the phase's
// record files too, and no refusal points at another way to the records.
func TestLLMDriverExpandContextCostAndCap(t *testing.T) {
	dir := t.TempDir()
	sd := filepath.Join(dir, "docs", "gaffer", "x", "story")
	long := strings.Repeat("the alarm rings at the configured time ", 40)
	names := writeRecords(t, sd,
		story.Record{Seq: 1, Role: "developer", Phase: 1, Attempt: 1, Summary: long, Facts: story.Facts{Methods: []string{"Clock.Now() time.Time"}}},
		story.Record{Seq: 2, Role: "reviewer", Phase: 1, Attempt: 1, Summary: "approved: fine"},
		story.Record{Seq: 3, Role: "developer", Phase: 2, Attempt: 1, Summary: "snooze added"},
	)
	rel := "docs/gaffer/x/story"
	p1, err := agent.PhaseRecords(sd, rel, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	p2, err := agent.PhaseRecords(sd, rel, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	rec1 := fmt.Sprintf(`{"path":%q}`, rel+"/"+names[0])
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Calls: []fakellm.Call{call("expand_context", `{"phase":1}`)}},
		fakellm.Turn{Calls: []fakellm.Call{
			call("read_file", rec1), // the second expansion of phase 1
			call("read_file", fmt.Sprintf(`{"path":"./%s/%s"}`, rel, names[1])), // refused: the cap
			call("expand_context", `{"phase":1}`),                               // refused: the cap
			call("read_file", fmt.Sprintf(`{"path":%q}`, rel+"/"+names[2])),     // phase 2: its first
			call("read_file", `{"path":"README.md"}`),                           // not a record: not counted (missing, so an error)
		}},
		fakellm.Turn{Text: "done"},
	)
	r := tl.run(t, agent.Session{RunID: "r1", Phase: 3, Attempt: 1, Prompt: "Build the alarm.", Dir: dir, StoryDir: rel})
	if r.err != nil || r.rep.Status != agent.StatusCompleted {
		t.Fatalf("run: %v, report %+v", r.err, r.rep)
	}
	desc := toolDescription(t, tl.srv.Requests()[0].Body, "expand_context")
	want := fmt.Sprintf("about %d tokens for phase 1, %d for phase 2 (estimated at 4 bytes a token)", story.Tokens(p1), story.Tokens(p2))
	if !strings.Contains(desc, want) {
		t.Errorf("the tool's description does not name the cost before the call:\n%s\nwant %q", desc, want)
	}
	if story.Tokens(p1) < len(long)/4 {
		t.Errorf("phase 1's cost %d is below its records' size", story.Tokens(p1))
	}
	res := r.results()
	if len(res) != 6 {
		t.Fatalf("results = %+v", res)
	}
	if res[0].IsError || !strings.Contains(res[0].Text, "call 1 of 2") || res[1].IsError || !strings.Contains(res[1].Text, "Clock.Now") {
		t.Fatalf("the first expansion and the read of a record must pass: %+v %+v", res[0], res[1])
	}
	for _, i := range []int{2, 3} {
		if !res[i].IsError || !strings.Contains(res[i].Text, "used up") {
			t.Errorf("result %d: a third expansion of phase 1 must be refused: %+v", i, res[i])
		}
		if strings.Contains(res[i].Text, "read "+rel) || strings.Contains(res[i].Text, "instead") {
			t.Errorf("result %d: the refusal points at another way to the records: %s", i, res[i].Text)
		}
	}
	if res[4].IsError || !strings.Contains(res[4].Text, "snooze added") {
		t.Errorf("phase 2's record is its own phase's first expansion: %+v", res[4])
	}
	if r.rep.Expansions != 3 {
		t.Errorf("Expansions = %d, want 3 (two of phase 1, one of phase 2)", r.rep.Expansions)
	}
}

// TestLLMDriverExpandContextNoCostInPhaseOne: a first phase has nothing
// earlier to expand, and says no cost.
func TestLLMDriverExpandContextNoCostInPhaseOne(t *testing.T) {
	dir := t.TempDir()
	tl := newTestLLM(t, ProviderOpenAI, Config{}, fakellm.Turn{Text: "done"})
	r := tl.run(t, agent.Session{RunID: "r1", Phase: 1, Attempt: 1, Prompt: "x", Dir: dir, StoryDir: "story"})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if desc := toolDescription(t, tl.srv.Requests()[0].Body, "expand_context"); strings.Contains(desc, "tokens") {
		t.Errorf("phase 1's description names a cost: %s", desc)
	}
}
