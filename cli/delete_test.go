package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// gafferTTY runs the CLI in-process as on a terminal that answers in.
func gafferTTY(t *testing.T, in string, args ...string) (string, int) {
	t.Helper()
	var buf bytes.Buffer
	app := NewWithIO("test", IO{In: strings.NewReader(in), Out: &buf, Err: &buf, Terminal: func() bool { return true }})
	inProcess.Lock() // see inProcess
	defer inProcess.Unlock()
	err := app.RunContext(context.Background(), append([]string{"gaffer"}, args...))
	Report(&buf, err)
	return buf.String(), ExitCode(err)
}

func listIDs(t *testing.T, dir string) []string {
	t.Helper()
	out, code := gaffer(t, "--repo", dir, "list", "--json")
	var vs []runview.Run
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.RunID)
	}
	return ids
}

// TestDeleteAndPrune: delete removes a finished run (after a yes on a
// terminal) with its transcripts and refuses an unfinished one; prune
// removes the finished runs beyond --keep; commits stay in git.
func TestDeleteAndPrune(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-aaaaaa"); code != 0 {
		t.Fatalf("run a: exit %d\n%s", code, out)
	}
	commits := gitOut(t, dir, "rev-list", "--count", "HEAD")
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-20260102-bbbbbb"); code != ExitAwaitingApproval {
		t.Fatalf("run b: exit %d", code)
	}
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-20260103-cccccc"); code != ExitAwaitingApproval {
		t.Fatalf("run c: exit %d", code)
	}
	if _, code := gaffer(t, "--repo", dir, "reject", "r-20260103-cccccc"); code != ExitRejected {
		t.Fatalf("reject c: exit %d", code)
	}

	out, code := gaffer(t, "--repo", dir, "delete", "r-20260102-bbbbbb")
	if code != ExitPrecondition || !strings.Contains(out, "run r-20260102-bbbbbb is awaiting_approval; cancel it first") {
		t.Fatalf("delete of a waiting run: exit %d\n%s", code, out)
	}
	out, code = gafferTTY(t, "n\n", "--repo", dir, "delete", "r-20260101-aaaaaa")
	if code != 0 || !strings.Contains(out, "Delete run r-20260101-aaaaaa from the store, about ") || !strings.HasSuffix(out, "Nothing deleted.\n") {
		t.Fatalf("delete, answered no: exit %d\n%s", code, out)
	}
	if got := len(listIDs(t, dir)); got != 3 {
		t.Fatalf("%d runs after a no", got)
	}
	logs := filepath.Join(dir, ".git", "gaffer.logs", "r-20260101-aaaaaa")
	if _, err := os.Stat(logs); err != nil {
		t.Fatalf("run a's transcripts: %v", err)
	}
	out, code = gafferTTY(t, "y\n", "--repo", dir, "delete", "r-20260101-aaaaaa")
	kept := "Deleted run r-20260101-aaaaaa.\nKept branch gaffer/r-20260101-aaaaaa: it holds unmerged work (gaffer --repo " + dir + " merge r-20260101-aaaaaa takes it into your branch; gaffer --repo " + dir + " delete r-20260101-aaaaaa --branches deletes it).\n"
	if code != 0 || !strings.HasSuffix(out, kept) {
		t.Fatalf("delete, answered yes: exit %d\n%s", code, out)
	}
	if gitOut(t, dir, "branch", "--list", "gaffer/r-20260101-aaaaaa") == "" {
		t.Fatal("delete removed an unmerged branch without --branches")
	}
	if _, err := os.Stat(logs); !os.IsNotExist(err) {
		t.Fatalf("run a's transcripts are still there: %v", err)
	}
	if out, code := gaffer(t, "--repo", dir, "status", "r-20260101-aaaaaa"); code != ExitPrecondition {
		t.Fatalf("status of a deleted run: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "rev-list", "--count", "HEAD"); got != commits {
		t.Fatalf("%s commits after delete, want %s", got, commits)
	}

	out, code = gaffer(t, "--repo", dir, "prune", "--keep", "1")
	keptNote := "Kept 1 branch of deleted runs with unmerged work: gaffer/r-20260101-aaaaaa (gaffer list shows them; gaffer --repo " + dir + " prune --branches deletes them).\n"
	if code != 0 || out != "Nothing to prune: 1 finished run kept.\n"+keptNote {
		t.Fatalf("prune --keep 1: exit %d\n%q", code, out)
	}
	out, code = gaffer(t, "--repo", dir, "prune", "--keep", "0")
	// The rejected run made no commit: its branch is merged already, and goes.
	if code != 0 || out != "Deleted run r-20260103-cccccc.\nDeleted branch gaffer/r-20260103-cccccc: its commits are merged.\n"+keptNote {
		t.Fatalf("prune --keep 0: exit %d\n%q", code, out)
	}
	// The deleted run a is listed by its kept branch.
	if got := listIDs(t, dir); len(got) != 2 || got[0] != "r-20260102-bbbbbb" || got[1] != "r-20260101-aaaaaa" {
		t.Fatalf("runs after prune: %v", got)
	}
	if got := gitOut(t, dir, "branch", "--list", "gaffer/*"); strings.Contains(got, "cccccc") {
		t.Fatalf("the rejected run's branch is still there: %s", got)
	}
}

// TestDeleteRemovesMergedBranchesAndKeepsUnmergedWork: a merged run's
// branch goes with the run; an unmerged one, and its rescue refs, stay
// unless --branches, which removes them.
func TestDeleteRemovesMergedBranchesAndKeepsUnmergedWork(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	for _, id := range []string{"r-20260101-aaaaaa", "r-20260102-bbbbbb"} {
		if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", id, code, out)
		}
	}
	if out, code := gaffer(t, "--repo", dir, "merge", "r-20260101-aaaaaa"); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "delete", "r-20260101-aaaaaa")
	if code != 0 || out != "Deleted run r-20260101-aaaaaa.\nDeleted branch gaffer/r-20260101-aaaaaa: its commits are merged.\n" {
		t.Fatalf("delete of a merged run: exit %d\n%s", code, out)
	}
	// A rescue ref, as a reset that met the user's changes leaves one.
	gitOut(t, dir, "update-ref", "refs/gaffer/rescue/r-20260102-bbbbbb/phase-2-attempt-1", "HEAD")
	tip := gitOut(t, dir, "rev-parse", "gaffer/r-20260102-bbbbbb")
	out, code = gaffer(t, "--repo", dir, "prune", "--keep", "0")
	if code != 0 || !strings.Contains(out, "Kept branch gaffer/r-20260102-bbbbbb: it holds unmerged work") ||
		!strings.Contains(out, "Kept 1 rescue ref of run r-20260102-bbbbbb: changes a reset put aside (git stash apply refs/gaffer/rescue/r-20260102-bbbbbb/phase-2-attempt-1; --branches deletes them).") {
		t.Fatalf("prune: exit %d\n%s", code, out)
	}
	if gitOut(t, dir, "rev-parse", "gaffer/r-20260102-bbbbbb") != tip || gitOut(t, dir, "for-each-ref", "refs/gaffer/rescue") == "" {
		t.Fatal("prune removed unmerged work without --branches")
	}
	// The run is gone from the store; a second run with --branches cleans up.
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260103-cccccc"); code != 0 {
		t.Fatalf("run c: exit %d\n%s", code, out)
	}
	gitOut(t, dir, "update-ref", "refs/gaffer/rescue/r-20260103-cccccc/phase-1-attempt-1", "HEAD")
	out, code = gaffer(t, "--repo", dir, "delete", "r-20260103-cccccc", "--branches")
	if code != 0 || out != "Deleted run r-20260103-cccccc.\nDeleted branch gaffer/r-20260103-cccccc and its unmerged commits (--branches).\nDeleted 1 rescue ref of run r-20260103-cccccc (--branches).\n" {
		t.Fatalf("delete --branches: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "for-each-ref", "refs/heads/gaffer/r-20260103-cccccc", "refs/gaffer/rescue/r-20260103-cccccc"); got != "" {
		t.Fatalf("refs left after --branches: %s", got)
	}
}
