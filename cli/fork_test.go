package cli

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestForkResumesOnItsOwnBranch forks a finished demo run in the middle
// of phase 3 and resumes the fork with the real binary: the fork is on
// branch gaffer/<fork> at phase 2's commit, redoes phases 3 and 4 there
// under its own id, execution directory and creation time, and leaves
// the user's branch where the parent run left it.
func TestForkResumesOnItsOwnBranch(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const parentID = "r-20260101-parent"
	dir := finishedInPlace(t, bin, parentID)
	userBranch := gitOut(t, dir, "branch", "--show-current")
	userHead := gitOut(t, dir, "rev-parse", "HEAD")
	parent, _ := statusOf(t, bin, dir, parentID)

	// Oldest first, the checkpoints before a review: phase 1, phase 2
	// twice (its first attempt is rejected), then phase 3.
	seq := forkSeq(t, bin, dir, parentID, 4)

	// A change to a tracked file would be overwritten by the checkout.
	writeTestFile(t, filepath.Join(dir, "doc.go"), "package calc // mine\n")
	if out, code := gafferCmd(t, bin, "--repo", dir, "fork", parentID, "--from", strconv.FormatUint(seq, 10)); code != ExitPrecondition ||
		!strings.Contains(out, "work tree has uncommitted changes (1 path: M doc.go)") {
		t.Fatalf("fork on a changed tracked file: exit %d\n%s", code, out)
	}
	gitOut(t, dir, "checkout", "--", "doc.go")
	if got := len(strings.Split(gitOut(t, dir, "branch", "--list"), "\n")); got != 1 {
		t.Fatalf("the refused fork left a branch: %d branches", got)
	}

	out, code := gafferCmd(t, bin, "--repo", dir, "fork", parentID, "--from", strconv.FormatUint(seq, 10))
	m := regexp.MustCompile(`as (r-\S+), on branch gaffer/(r-\S+) at `).FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != m[2] {
		t.Fatalf("fork: exit %d\n%s", code, out)
	}
	fork := m[1]
	if got := gitOut(t, dir, "branch", "--show-current"); got != "gaffer/"+fork {
		t.Fatalf("on branch %q after the fork, want gaffer/%s", got, fork)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != parent.Phases[1].PostCommit {
		t.Fatalf("the fork's branch is at %s, want phase 2's commit %s", got, parent.Phases[1].PostCommit)
	}

	if out, code := gafferCmd(t, bin, "--repo", dir, "resume", fork); code != 0 {
		t.Fatalf("resume %s: exit %d\n%s", fork, code, out)
	}
	v, _ := statusOf(t, bin, dir, fork)
	if v.Status != "completed" {
		t.Fatalf("the fork is %s", v.Status)
	}
	if v.ExecDir == parent.ExecDir || !v.CreatedAt.After(parent.CreatedAt) {
		t.Errorf("the fork shares the parent's execution directory %q or creation time %s: %q, %s",
			parent.ExecDir, parent.CreatedAt, v.ExecDir, v.CreatedAt)
	}
	runs := gitOut(t, dir, "log", "--format=%(trailers:key=Gaffer-Run,valueonly,separator=)|%s", "gaffer/"+fork)
	want := []string{fork + "|gaffer: record of", fork + "|phase 4:", fork + "|phase 3:", parentID + "|phase 2:", parentID + "|phase 1:"}
	lines := strings.Split(runs, "\n")
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Fatalf("the fork's branch:\n%s\nwant, from the top: %q", runs, want)
		}
	}
	if got := gitOut(t, dir, "rev-parse", userBranch); got != userHead {
		t.Errorf("the user's branch %s moved from %s to %s", userBranch, userHead, got)
	}
	if got := gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD", v.ExecDir); !strings.Contains(got, "phase-1/summary.md") {
		t.Errorf("the fork's execution directory lacks the earlier phases' summaries:\n%s", got)
	}
	if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
		t.Errorf("the tree is not clean:\n%s", got)
	}
}
