package nodes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// TestPlantedLinkInExecDirStopsTheRun is issue 30's symbolic link
// attack on the execution directory: phase 1's developer makes phase-1,
// story, or the execution directory itself a link to a directory of the
// user's. gaffer's next write there (the story record, the summary, the
// plan) stops the run with a *workspace.LinkError naming the link, and
// nothing is written where it points.
func TestPlantedLinkInExecDirStopsTheRun(t *testing.T) {
	for _, c := range []struct{ name, plant string }{
		{"phase-1", `ln -s "$T" "$d/phase-1"`},
		{"story", `rm -rf "$d/story"; ln -s "$T" "$d/story"`},
		{"the directory", `rm -rf "$d"; ln -s "$T" "$d"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := t.TempDir()
			script := phase1OK + `
      - run: 'T=` + target + `; for d in docs/gaffer/*; do ` + c.plant + `; done'
    decisions: [{topic: layout, what: one file, why: small}]
`
			h := newHarness(t, script)
			_, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
			var le *workspace.LinkError
			if !errors.Is(err, workspace.ErrLink) || !errors.As(err, &le) {
				t.Fatalf("run: %v, want a workspace.LinkError", err)
			}
			if !strings.HasPrefix(le.Path, "docs/gaffer/") || le.Target != target || !strings.Contains(err.Error(), "rm "+filepath.Join(h.dir, le.Path)) {
				t.Errorf("the error names %s -> %s:\n%v", le.Path, le.Target, err)
			}
			if left, _ := os.ReadDir(target); len(left) != 0 {
				t.Errorf("gaffer wrote through the link: %v", left)
			}
		})
	}
}
