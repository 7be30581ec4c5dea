package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/host"
)

// A runMode is where a test's run works: in the user's checkout (gaffer
// run --in-place), or in its own work tree on branch gaffer/<run-id> (the
// default). The kill tests run in both; in the second they look at the
// run's branch and work tree, and check that the user's checkout never
// changed.
type runMode struct {
	name    string
	inPlace bool
}

// runModes are both: in place, then in the run's own work tree.
var runModes = []runMode{{"in place", true}, {"own work tree", false}}

// args is a `gaffer run` (or submit) command line in this mode.
func (m runMode) args(args ...string) []string {
	if m.inPlace {
		return append(args, "--in-place")
	}
	return args
}

// rev is where the run's commits are: HEAD in place, its branch otherwise.
func (m runMode) rev(runID string) string {
	if m.inPlace {
		return "HEAD"
	}
	return host.RunBranch(runID)
}

// workDir is the tree run runID of repository dir works in while it goes on.
func (m runMode) workDir(dir, runID string) string {
	if m.inPlace {
		return dir
	}
	return filepath.Join(host.WorkTreesDir(filepath.Join(dir, ".git", "gaffer")), runID)
}

// untouched returns a check that the user's checkout dir is byte for byte
// (files, HEAD, branch and git's status) as it is now; in place it checks
// nothing.
func (m runMode) untouched(t *testing.T, dir string) func(when string) {
	t.Helper()
	if m.inPlace {
		return func(string) {}
	}
	before := checkoutPrint(t, dir)
	return func(when string) {
		t.Helper()
		if after := checkoutPrint(t, dir); after != before {
			t.Fatalf("%s: the user's checkout changed:\nbefore\n%s\nafter\n%s", when, before, after)
		}
	}
}

// workTreeGone fails when run runID's own work tree outlived its end
// (any run's, for runID "").
func (m runMode) workTreeGone(t *testing.T, dir, runID string) {
	t.Helper()
	if m.inPlace {
		return
	}
	if runID == "" {
		if left, _ := os.ReadDir(m.workDir(dir, "")); len(left) != 0 {
			t.Errorf("work trees left after every run ended: %v", left)
		}
		return
	}
	if _, err := os.Stat(m.workDir(dir, runID)); !os.IsNotExist(err) {
		t.Errorf("the ended run's work tree is still there: %v", err)
	}
}

// runRev is where the newest run of repository dir left its commits: its
// branch gaffer/<run-id>, or HEAD when no run had a branch of its own
// (runs in place).
func runRev(t *testing.T, dir string) string {
	t.Helper()
	if b := gitOut(t, dir, "for-each-ref", "--sort=-committerdate", "--count=1", "--format=%(refname:short)", "refs/heads/"+host.ForkBranchPrefix); b != "" {
		return b
	}
	return "HEAD"
}
