package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// finishedRuns makes the demo repository and runs its plan to the end,
// through the binary, once per id (each on its own branch, from the same
// HEAD), and returns the repository.
func finishedRuns(t *testing.T, bin string, ids ...string) string {
	t.Helper()
	dir, plan, script := demoRepo(t)
	for _, id := range ids {
		if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", id, code, out)
		}
	}
	return dir
}

// TestDeleteKeepsABranchOnlyADetachedHEADHolds: after `git checkout
// --detach gaffer/RUN`, HEAD has every commit of the run's branch, but no
// branch of the user's does: delete keeps the branch (its commits would
// be left to the reflog) and says so.
func TestDeleteKeepsABranchOnlyADetachedHEADHolds(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const id = "r-detached"
	dir := finishedRuns(t, bin, id)
	tip := gitOut(t, dir, "rev-parse", "gaffer/"+id)
	gitOut(t, dir, "checkout", "-q", "--detach", "gaffer/"+id)
	out, code := gafferCmd(t, bin, "--repo", dir, "delete", id, "--yes")
	if code != 0 || !strings.Contains(out, "Kept branch gaffer/"+id+": it holds unmerged work") {
		t.Fatalf("delete: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "rev-parse", "gaffer/"+id); got != tip {
		t.Fatalf("the branch is %q, want it kept at %s", got, tip)
	}
}

// TestDeleteChangesNothingWhenItsBranchIsCheckedOut: a merged run's
// branch is to go with the run, but the user has it checked out, in
// the checkout or in a work tree of their own. delete refuses in one line
// naming where, exit 8, before anything is removed: the run is still in
// the store and the branch is there. Checked out elsewhere again, the
// delete goes whole.
func TestDeleteChangesNothingWhenItsBranchIsCheckedOut(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const id = "r-out"
	dir := finishedRuns(t, bin, id)
	if out, code := gafferCmd(t, bin, "--repo", dir, "merge", id); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	mine := filepath.Join(t.TempDir(), "mine")
	for _, where := range []string{dir, mine} {
		if where == dir {
			gitOut(t, dir, "checkout", "-q", "gaffer/"+id)
		} else {
			gitOut(t, dir, "checkout", "-q", "main")
			gitOut(t, dir, "worktree", "add", "-q", mine, "gaffer/"+id)
		}
		real, _ := filepath.EvalSymlinks(where)
		out, code := gafferCmd(t, bin, "--repo", dir, "delete", id, "--yes")
		want := "gaffer: branch gaffer/" + id + " is checked out in " + real + ": check out another branch there, then gaffer --repo " + dir + " delete " + id + " (nothing was deleted)\n"
		if code != ExitPrecondition || out != want {
			t.Fatalf("checked out in %s: exit %d, want %d and\n%q\ngot\n%q", where, code, ExitPrecondition, want, out)
		}
		if _, err := tryStatus(bin, dir, id); err != nil {
			t.Fatalf("the refused delete removed the run: %v", err)
		}
		if gitOut(t, dir, "branch", "--list", "gaffer/"+id) == "" {
			t.Fatal("the refused delete removed the branch")
		}
	}
	gitOut(t, dir, "worktree", "remove", mine)
	out, code := gafferCmd(t, bin, "--repo", dir, "delete", id, "--yes")
	if code != 0 || out != "Deleted run "+id+".\nDeleted branch gaffer/"+id+": its commits are merged.\n" {
		t.Fatalf("delete: exit %d\n%s", code, out)
	}
}

// TestADeletedRunsKeptBranchStaysReachable: `gaffer delete --yes RUN` of
// a run with unmerged work keeps its branch and says gaffer merge takes
// it. That is true: list shows the run as "deleted run, unmerged work on
// gaffer/RUN" (in --json too), merge takes the work, and delete, once it
// is merged, removes the branch. Another such branch goes with prune
// --keep 0 --branches.
func TestADeletedRunsKeptBranchStaysReachable(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const a, b = "r-20260101-kept", "r-20260102-kept"
	dir := finishedRuns(t, bin, a, b)
	for _, id := range []string{a, b} {
		out, code := gafferCmd(t, bin, "--repo", dir, "delete", "--yes", id)
		want := "Kept branch gaffer/" + id + ": it holds unmerged work (gaffer --repo " + dir + " merge " + id + " takes it into your branch; gaffer --repo " + dir + " delete " + id + " --branches deletes it).\n"
		if code != 0 || !strings.HasSuffix(out, want) {
			t.Fatalf("delete %s: exit %d\n%s", id, code, out)
		}
	}
	out, code := gafferCmd(t, bin, "--repo", dir, "list")
	if code != 0 || !strings.Contains(out, "\n"+a+"  deleted ") || !strings.Contains(out, "  deleted run, unmerged work on gaffer/"+a+"\n") ||
		!strings.Contains(out, "\n"+b+"  deleted ") {
		t.Fatalf("list: exit %d, want the deleted runs' rows\n%s", code, out)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "list", "--json")
	var rows []runview.Run
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 ||
		rows[0].RunID != b || rows[0].Status != "deleted" || rows[0].Branch != "gaffer/"+b || !rows[0].Unmerged || !rows[0].Deleted {
		t.Fatalf("list --json: exit %d\n%s", code, out)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "delete", a)
	if code != ExitPrecondition || !strings.Contains(out, "run "+a+" was deleted already; its branch gaffer/"+a+" holds unmerged work: gaffer --repo "+dir+" merge "+a) {
		t.Fatalf("delete of the deleted run without --branches: exit %d\n%s", code, out)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "merge", a, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "Run "+a+" was deleted; its branch gaffer/"+a+" kept its work.\nWould fast-forward main to gaffer/"+a+": 5 commits,") {
		t.Fatalf("merge --dry-run of the deleted run: exit %d\n%s", code, out)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "merge", a)
	if code != 0 || !strings.Contains(out, "Fast-forwarded main to gaffer/"+a+": 5 commits") {
		t.Fatalf("merge of the deleted run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "eval.go")); err != nil {
		t.Fatalf("the deleted run's work is not in the checkout: %v", err)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "delete", a)
	if code != 0 || out != "Run "+a+" was deleted already.\nDeleted branch gaffer/"+a+": its commits are merged.\n" {
		t.Fatalf("delete of the merged deleted run: exit %d\n%s", code, out)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "prune", "--keep", "0", "--branches", "--yes")
	if code != 0 || !strings.Contains(out, "Deleted branch gaffer/"+b+" of a deleted run and its unmerged commits (--branches).") {
		t.Fatalf("prune --branches: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "for-each-ref", "refs/heads/gaffer/"); got != "" {
		t.Fatalf("branches left: %s", got)
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list after prune: exit %d\n%s", code, out)
	}
}
