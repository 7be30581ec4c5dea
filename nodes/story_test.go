package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

const fourPhasePlan = `# Plan: four phases

### Task 1: the queue's tests
- type: test
- depends on: none

### Task 2: the queue
- type: impl
- depends on: 1

### Task 3: the worker
- type: impl
- depends on: 2

### Task 4: the docs
- type: impl
- depends on: 3
`

// storyScript: every developer session reports story facts; phase 2's
// first attempt is rejected, so phase 2 has two records (Level 1 across
// attempts).
func storyScript(extra string) string {
	return `
developer:
  - phase: 1
    actions: [{write: {path: queue_test.txt, content: "t\n"}}]
    decisions: [{topic: queue, what: a bounded ring buffer, why: no allocation per push}]
    methods: ["Queue.Push(v int) error"]
    dependencies: [golang.org/x/sync]
  - phase: 2
    attempt: 1
    actions: [{write: {path: queue.txt, content: "v1\n"}}]
    decisions: [{topic: overflow, what: drop the oldest item, why: simplest}]
    commands: ["TODO: block on overflow"]
  - phase: 2
    attempt: 2
    actions: [{write: {path: queue.txt, content: "v2\n"}}]
    decisions: [{topic: overflow, what: return ErrFull on overflow, why: the reviewer asked}]
    commands: ["NOT TODO: drop items silently", "DONE: block on overflow"]
    methods: ["Queue.Push(v int) error", "Queue.Pop() (int, bool)"]
  - phase: 3
    actions: [{write: {path: worker.txt, content: "w\n"}}]
    requirements: ["Workers must stop within 1s of cancel."]
    methods: ["Worker.Run(ctx context.Context) error"]
  - phase: 4
    actions: [{write: {path: docs.txt, content: "d\n"}}]
reviewer:
  - phase: 2
    attempt: 1
    approved: false
    comments: overflow must not lose data
` + extra
}

// TestTaskStoryAcrossPhases runs a four-phase plan whose sessions report
// story facts: each session's record is a file in story/, committed with
// its phase; later prompts carry the story after the stable prefix; the
// summaries carry the story so far; the state keeps only counters.
func TestTaskStoryAcrossPhases(t *testing.T) {
	h := newHarness(t, storyScript(""))
	res, err := h.start(fourPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	sd := storyDir(s)
	files := strings.Split(h.git("ls-files", sd), "\n")
	want := []string{"001-developer-p1-a1.json", "002-developer-p2-a1.json", "003-reviewer-p2-a1.json", "004-developer-p2-a2.json", "005-developer-p3-a1.json",
		"006-developer-p4-a1.json"} // phase 4 reports a summary only: a record too
	for i := range files {
		files[i] = strings.TrimPrefix(files[i], sd+"/")
	}
	if !slices.Equal(files, want) {
		t.Fatalf("committed records %q, want %q", files, want)
	}
	// The record of phase 2 rides in phase 2's commit.
	if got := h.git("log", "--format=%s", "-1", "--", sd+"/004-developer-p2-a2.json"); got != "phase 2: the queue" {
		t.Fatalf("record 4 committed by %q", got)
	}
	if s.Progress.Story.Records != 6 {
		t.Fatalf("state counts %d records", s.Progress.Story.Records)
	}
	latest, err := os.ReadFile(filepath.Join(h.dir, sd, want[5]))
	if err != nil {
		t.Fatal(err)
	}
	if s.Progress.Story.Latest != story.Hash(latest) {
		t.Fatal("the state's latest hash is not the latest record's")
	}

	devs, _ := h.rec.of(agent.RoleDeveloper)
	if len(devs) != 5 {
		t.Fatalf("%d developer sessions", len(devs))
	}
	for i, d := range devs {
		if !strings.HasPrefix(d.Prompt, PhasePrefix) {
			t.Fatalf("prompt %d does not start with the stable prefix", i)
		}
		if j := strings.Index(d.Prompt, "Story so far"); j >= 0 && j < len(PhasePrefix) {
			t.Fatalf("story text inside the stable prefix of prompt %d", i)
		}
		if d.StoryDir != sd {
			t.Fatalf("session %d StoryDir %q", i, d.StoryDir)
		}
	}
	// Phase 2's retry sees attempt 1's record (Level 1).
	if p := devs[2].Prompt; !strings.Contains(p, "This phase so far") || !strings.Contains(p, "drop the oldest item") {
		t.Errorf("phase 2 attempt 2's prompt lacks attempt 1's record:\n%s", p)
	}
	// Phase 4 sees what phases 1-3 decided, superseded items gone.
	p4 := devs[4].Prompt
	for _, f := range []string{"golang.org/x/sync", "Queue.Push(v int) error", "Queue.Pop() (int, bool)", "Worker.Run(ctx context.Context) error",
		"NOT TODO: drop items silently", "Workers must stop within 1s of cancel.", "return ErrFull on overflow", "a bounded ring buffer",
		"phase 2: rejected: overflow must not lose data"} {
		if !strings.Contains(p4, f) {
			t.Errorf("phase 4's prompt lacks %q", f)
		}
	}
	for _, gone := range []string{"drop the oldest item", "TODO: block on overflow"} {
		if strings.Contains(p4, gone) {
			t.Errorf("phase 4's prompt keeps superseded %q", gone)
		}
	}
	if story.Tokens(p4) > story.Tokens(PhasePrefix)+story.Level2Budget+story.Level1Budget+500 {
		t.Errorf("phase 4's prompt has %d tokens", story.Tokens(p4))
	}
	sum, err := os.ReadFile(filepath.Join(h.dir, summaryPath(s, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), storySection) || !strings.Contains(string(sum), "Worker.Run(ctx context.Context) error") {
		t.Errorf("phase 3's summary lacks the story so far:\n%s", sum)
	}
}

// TestStablePrefixIsByteIdenticalAcrossPhases: the leading section of every
// developer prompt of a run is the same bytes, story or not.
func TestStablePrefixIsByteIdenticalAcrossPhases(t *testing.T) {
	h := newHarness(t, storyScript(""))
	res, err := h.start(fourPhasePlan, state.RunConfig{AutoApprove: true})
	mustDone(t, res, err, state.RunCompleted)
	devs, _ := h.rec.of(agent.RoleDeveloper)
	head := func(p string) string { i := strings.Index(p, "\n## Where to find context"); return p[:max(i, 0)] }
	for i, d := range devs {
		if head(d.Prompt) != head(devs[0].Prompt) || head(d.Prompt) != PhasePrefix {
			t.Fatalf("prompt %d's leading section differs:\n%q\nvs\n%q", i, head(d.Prompt), head(devs[0].Prompt))
		}
	}
}

// TestCheckpointDoesNotGrowWithTheStory: a run whose records are large
// checkpoints the same state as one whose records are small, but for
// the counters' digits.
func TestCheckpointDoesNotGrowWithTheStory(t *testing.T) {
	big := strings.Repeat("a long reason that takes room ", 200)
	script := func(why string) string {
		var b strings.Builder
		b.WriteString("developer:\n")
		for p := 1; p <= 4; p++ {
			fmt.Fprintf(&b, "  - phase: %d\n    decisions: [{topic: t%d, what: decided %d, why: %q}]\n", p, p, p, why)
		}
		return b.String()
	}
	sizes := map[string][]int{}
	for name, why := range map[string]string{"small": "x", "big": big} {
		h := newHarness(t, script(why))
		res, err := h.start(fourPhasePlan, state.RunConfig{AutoApprove: true})
		s := mustDone(t, res, err, state.RunCompleted)
		if s.Progress.Story.Records != 4 {
			t.Fatalf("%s: %d records", name, s.Progress.Story.Records)
		}
		hist, err := h.store.List(context.Background(), "r-1", checkpoint.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range hist {
			n := 0
			for _, v := range cp.Values {
				n += len(v)
			}
			sizes[name] = append(sizes[name], n)
		}
	}
	if len(sizes["big"]) != len(sizes["small"]) {
		t.Fatalf("different step counts %v", sizes)
	}
	for i := range sizes["big"] {
		if sizes["big"][i] != sizes["small"][i] {
			t.Fatalf("step %d: %d bytes with big records, %d with small: the story is in the state", i, sizes["big"][i], sizes["small"][i])
		}
	}
}

// TestSummarizer: an accepted summary goes into summary.md and the next
// prompt; an inventing one is rejected for the deterministic text; its
// usage is the summarizer role's and over 10% of the cost fires
// context_cost.
func TestSummarizer(t *testing.T) {
	h := newHarness(t, storyScript(`summarizer:
  - phase: 1
    text: "## Story so far\n\n- golang.org/x/sync\n- Queue.Push(v int) error\n- a bounded ring buffer\n"
    usage: {input_tokens: 50, output_tokens: 50, cost_usd: 0.5}
  - phase: 2
    text: "## Story so far\n\n- redis\n"
    usage: {input_tokens: 50, output_tokens: 50, cost_usd: 0.5}
  - phase: 3
    error: out of budget
`))
	var over []events.ContextCost
	unsub := h.runner.Subscribe(func(e graph.Event) {
		if c, ok := e.Payload.(events.ContextCost); ok && e.Kind == graph.Custom && e.Name == events.EventContextCost {
			over = append(over, c)
		}
	})
	defer unsub()
	cfg := state.RunConfig{AutoApprove: true}
	cfg.Agents.Summarizer.Driver = "script"
	res, err := h.start(fourPhasePlan, cfg)
	s := mustDone(t, res, err, state.RunCompleted)
	if got := s.Usage["summarizer"]; got.CostUSD != 1.0 || got.InputTokens != 100 {
		t.Fatalf("summarizer usage %+v", got)
	}
	if s.Progress.Story.Summaries != 1 {
		t.Fatalf("%d summaries accepted, want 1", s.Progress.Story.Summaries)
	}
	read := func(i int) string {
		b, err := os.ReadFile(filepath.Join(h.dir, summaryPath(s, i)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(0); !strings.Contains(got, "- a bounded ring buffer\n") || strings.Contains(got, "Decisions:") {
		t.Errorf("phase 1's summary is not the summarizer's:\n%s", got)
	}
	if got := read(1); strings.Contains(got, "redis") || !strings.Contains(got, "Queue.Pop() (int, bool)") {
		t.Errorf("phase 2's summary took an invented fact or lost one:\n%s", got)
	}
	if got := read(2); !strings.Contains(got, "Worker.Run(ctx context.Context) error") {
		t.Errorf("phase 3's summary (summarizer failed) is not the deterministic one:\n%s", got)
	}
	devs, _ := h.rec.of(agent.RoleDeveloper)
	if !strings.Contains(devs[1].Prompt, "- a bounded ring buffer\n") {
		t.Errorf("phase 2's prompt does not carry the accepted summary")
	}
	if len(over) == 0 || over[0].Share <= events.ContextCostLimit {
		t.Fatalf("context_cost events %+v", over)
	}
}

// TestStoryRecordsSurviveCrashAtEveryCheckpoint loses each checkpoint of a
// story run in turn — among them the one after a record was written and
// before the phase's commit — and resumes: every run ends with exactly
// the records of the run that never crashed, committed, none twice, and
// nothing left over in story/.
func TestStoryRecordsSurviveCrashAtEveryCheckpoint(t *testing.T) {
	// Phase 3's approval has something to say: its reviewer's record
	// rides in the phase's commit, which a resume adopts.
	const approved = "  - {phase: 3, approved: true, comments: the worker must drain the queue before it stops}\n"
	ref := newHarness(t, storyScript(approved))
	res, err := ref.start(fourPhasePlan, state.RunConfig{AutoApprove: true})
	s := mustDone(t, res, err, state.RunCompleted)
	sd := storyDir(s)
	wantFiles, wantTree := ref.git("ls-files", sd), ref.git("rev-parse", "HEAD^{tree}")
	if !strings.Contains(wantFiles, "006-reviewer-p3-a1.json") {
		t.Fatalf("no reviewer record of phase 3's approval:\n%s", wantFiles)
	}
	puts := ref.store.puts.Load()
	for k := int64(2); k <= puts; k++ {
		h := newHarness(t, storyScript(approved))
		h.failAt(k)
		res, err := h.start(fourPhasePlan, state.RunConfig{AutoApprove: true})
		res, err = h.resumeCrashed(k, res, err)
		end := mustDone(t, res, err, state.RunCompleted)
		if got := h.git("ls-files", sd); got != wantFiles {
			t.Fatalf("checkpoint %d lost: records\n%s\nwant\n%s", k, got, wantFiles)
		}
		if got := h.git("rev-parse", "HEAD^{tree}"); got != wantTree {
			t.Fatalf("checkpoint %d lost: tree %s, want %s", k, got, wantTree)
		}
		if got := h.git("status", "--porcelain", "--untracked-files=all"); got != "?? notes.txt" {
			t.Fatalf("checkpoint %d lost: leftovers\n%s", k, got)
		}
		if end.Progress.Story.Records != 7 {
			t.Fatalf("checkpoint %d lost: the state counts %d records", k, end.Progress.Story.Records)
		}
	}
	t.Logf("lost each of %d checkpoints in turn", puts-1)
}
