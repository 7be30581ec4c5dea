package nodes

import (
	"strings"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

// userAsked is how the human's feedback reads in the story: a user
// requirement, kept word for word by every later phase's story (seed 004
// keeps user requirements verbatim; issue 37 item 8).
func userAsked(feedback string) string { return "The user asked: " + strings.TrimSpace(feedback) }

// writeUserRecord writes the human's feedback as a Task Story record of
// role story.RoleUser (phase is 1-based, 0 before the first phase) with
// what happened as its summary, and returns s with the counters
// advanced. Empty feedback writes nothing. Like every record it is
// numbered Records+1, so a step run again after a crash rewrites it.
func (w *workflow) writeUserRecord(s state.ExecutionState, phase, attempt int, what, feedback string) (state.ExecutionState, error) {
	fb := strings.TrimSpace(feedback)
	if fb == "" {
		return s, nil
	}
	return w.putStoryRecord(s, story.Record{Seq: s.Progress.Story.Records + 1, Role: story.RoleUser, Phase: phase, Attempt: attempt,
		Summary: what, Facts: story.Facts{Requirements: []string{userAsked(fb)}}})
}
