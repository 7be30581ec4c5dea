package nodes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestAllowDirtyHaltPutsTheUsersChangesBack: a run started on a dirty
// tree with AllowDirty halts in phase 2; the phases ran on a clean tree
// (the user's edit never reached a commit), and after the halt the user's
// tracked edit, staged file and untracked notes are back, the stash's ref
// dropped and the state saying so.
func TestAllowDirtyHaltPutsTheUsersChangesBack(t *testing.T) {
	h := newHarness(t, phase1OK+`
  - phase: 2
    actions:
      - write: {path: README.md, content: "the run's readme\n"}
reviewer:
  - phase: 2
    approved: false
    comments: still wrong
`)
	writeFile(t, h.dir, "README.md", "# test\nthe user's edit\n")
	writeFile(t, h.dir, "staged.txt", "staged by the user\n")
	h.git("add", "staged.txt")
	before := h.git("status", "--porcelain")
	res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true, AllowDirty: true})
	s := mustDone(t, res, err, state.RunHalted)
	if !s.Stash.Restored || s.Stash.Commit == "" {
		t.Fatalf("stash state %+v", s.Stash)
	}
	if got := h.git("status", "--porcelain"); got != before {
		t.Errorf("status after the halt:\n%s\nwant\n%s", got, before)
	}
	for name, want := range map[string]string{"README.md": "# test\nthe user's edit\n", "staged.txt": "staged by the user\n", "notes.txt": "the user's own notes\n"} {
		if b, err := os.ReadFile(filepath.Join(h.dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if got := h.git("show", "HEAD:README.md"); got != "# test" {
		t.Errorf("phase 1's commit has README.md %q: the user's edit reached a commit", got)
	}
	if got := h.git("show", "--stat", "--format=", "HEAD"); strings.Contains(got, "staged.txt") || strings.Contains(got, "notes.txt") {
		t.Errorf("phase 1 committed the user's files:\n%s", got)
	}
	if got := h.git("for-each-ref", "refs/gaffer/stash/", "refs/gaffer/rescue/"); got != "" {
		t.Errorf("refs left: %s", got)
	}
	// The failed attempts are kept (the run's deletion removes them),
	// with the run's work and none of the user's.
	if got := h.git("for-each-ref", "--format=%(refname)", "refs/gaffer/attempts/"); got != "refs/gaffer/attempts/r-1/p2-a1\nrefs/gaffer/attempts/r-1/p2-a2" {
		t.Errorf("attempt refs: %q", got)
	}
	if got := h.git("show", "--format=", "--name-only", "refs/gaffer/attempts/r-1/p2-a2"); got != "README.md" {
		t.Errorf("the kept attempt changed %q, want the run's README.md only", got)
	}
	if got := h.git("show", "refs/gaffer/attempts/r-1/p2-a2:README.md"); got != "the run's readme" {
		t.Errorf("the kept attempt's README.md = %q", got)
	}
}
