package cliagent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/story"
)

// A CLI agent is told where the story's records are, what to read and
// the command that prints them; a session without a story is told
// nothing.
func TestStoryHint(t *testing.T) {
	if got := StoryHint("", ""); got != "" {
		t.Errorf("no story: %q", got)
	}
	h := StoryHint("docs/gaffer/run/story", "")
	for _, want := range []string{"docs/gaffer/run/story/NNN-ROLE-pP-aA.json", "docs/gaffer/run/story/*-p3-a*.json", "rejected", "Do not edit them", "gaffer story show --phase 3"} {
		if !strings.Contains(h, want) {
			t.Errorf("hint lacks %q:\n%s", want, h)
		}
	}
}

// A CLI agent in phase 2 is told what reading phase 1's records costs
// (seed 004: the cost before the expansion), estimated from the files in
// its work tree; in phase 1 nothing.
func TestStoryHintNamesTheCost(t *testing.T) {
	dir := t.TempDir()
	sd := filepath.Join(dir, "docs", "gaffer", "run", "story")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	r := story.Record{Seq: 1, Role: "developer", Phase: 1, Attempt: 1, Summary: strings.Repeat("a decision about clocks ", 50)}
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, r.Name()), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := agent.Session{Phase: 2, StoryDir: "docs/gaffer/run/story"}
	text, err := agent.PhaseRecords(sd, s.StoryDir, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	c := storyCosts(dir, s)
	if want := "about " + strconv.Itoa(story.Tokens(text)) + " tokens for phase 1"; !strings.Contains(c, want) || !strings.Contains(StoryHint(s.StoryDir, c), want) {
		t.Errorf("cost %q lacks %q", c, want)
	}
	s.Phase = 1
	if c := storyCosts(dir, s); c != "" {
		t.Errorf("phase 1: %q", c)
	}
}
