package nodes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

// RedoPhase is s with its phase in progress started again from a fresh
// session, for a run whose checkpoint relies on work of the agent's that
// is not committed (a session to continue, a tree the review is to judge)
// and that work is gone: it was in the clone of the host that held the
// run, and the work tree at root is a new clone at the phase's pre-phase
// commit. The Task Story's counters become those of the records in root,
// so that the phase's new session writes its record under the number that
// follows them. ok is false when there is nothing to redo: the run has
// ended, its phase relies on nothing in the clone (state.PhaseState.InClone:
// no session, no lane at work in a tree of its own), or has its commit.
func RedoPhase(s state.ExecutionState, root string) (redone state.ExecutionState, ok bool) {
	if s.Status.Terminal() || len(s.Progress.Phases) == 0 {
		return s, false
	}
	ps, err := s.PhaseState(s.Progress.CurrentPhase())
	if err != nil || ps.PostCommit != "" || !ps.InClone() {
		return s, false
	}
	c, err := s.Clone().WithPhaseState(ps.FreshLanes())
	if err != nil {
		return s, false
	}
	c.Progress.Story.Records, c.Progress.Story.Latest = storyIn(filepath.Join(root, filepath.FromSlash(storyDir(s))))
	return c, true
}

// storyIn is the number of the newest decision record in the story
// directory dir and its hash (story.Hash); 0 and "" for none.
func storyIn(dir string) (int, string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, ""
	}
	n, latest := 0, ""
	for _, e := range ents {
		var k int
		if _, err := fmt.Sscanf(e.Name(), "%d-", &k); err != nil || e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if k > n {
			if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				n, latest = k, story.Hash(data)
			}
		}
	}
	return n, latest
}
