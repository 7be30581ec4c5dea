package cliagent

import (
	"strings"
	"testing"
)

// A CLI agent is told where the story's records are and what to read;
// a session without a story is told nothing.
func TestStoryHint(t *testing.T) {
	if got := StoryHint(""); got != "" {
		t.Errorf("no story: %q", got)
	}
	h := StoryHint("docs/gaffer/run/story")
	for _, want := range []string{"docs/gaffer/run/story/NNN-ROLE-pP-aA.json", "docs/gaffer/run/story/*-p3-a*.json", "rejected", "Do not edit them"} {
		if !strings.Contains(h, want) {
			t.Errorf("hint lacks %q:\n%s", want, h)
		}
	}
}
