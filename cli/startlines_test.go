package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/host"
)

// lineWith returns the one line of out that contains sub, failing when
// there is none or more than one.
func lineWith(t *testing.T, out, sub string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, sub) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one line with %q, got %d:\n%s", sub, len(found), out)
	}
	return found[0]
}

// Issue 23 item 1: a run says as it starts where its work goes.
func TestRunSaysWhereItsWorkGoes(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-where-1")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
	}
	tree := filepath.Join(host.WorkTreesDir(filepath.Join(dir, ".git", "gaffer")), "r-where-1")
	want := "Its work goes to branch gaffer/r-where-1 (work tree " + tree + "), not to your checkout: " +
		"when it is done, gaffer --repo " + dir + " merge r-where-1 takes it into main."
	if got := lineWith(t, out, "Its work goes"); got != want {
		t.Fatalf("start line\n got %q\nwant %q", got, want)
	}
	if strings.Contains(out, "uncommitted") {
		t.Fatalf("a clean checkout is not said to have uncommitted changes:\n%s", out)
	}
	if got := gitOut(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Fatalf("the user's branch is %q", got)
	}
	// The line is true: the run's work lands on that branch, not on main.
	mainBefore := gitOut(t, dir, "rev-parse", "main")
	if out, code := gaffer(t, "--repo", dir, "approve", "r-where-1"); code != 0 {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "rev-parse", "main"); got != mainBefore {
		t.Fatalf("main moved to %s", got)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "main..gaffer/r-where-1"); n == "0" {
		t.Fatal("the run's branch has no commits of its own")
	}

	dir2, plan2, script2 := demoRepo(t)
	out, code = gaffer(t, "--repo", dir2, "run", "--plan", plan2, "--script", script2, "--run-id", "r-where-2", "--in-place")
	if code != ExitAwaitingApproval {
		t.Fatalf("run --in-place: exit %d\n%s", code, out)
	}
	if got, want := lineWith(t, out, "in place"), "It works in place: its commits go on your branch main, in this checkout."; got != want {
		t.Fatalf("in-place start line\n got %q\nwant %q", got, want)
	}
	if strings.Contains(out, "gaffer/r-where-2") {
		t.Fatalf("an in-place run names no branch of its own:\n%s", out)
	}
}

// Issue 23 item 2: a default run started with uncommitted edits to
// tracked files says, in one line, that it starts without them, naming
// at most 10 of them, and how to work on them; untracked files are not
// named.
func TestRunSaysItStartsWithoutUncommittedEdits(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	var names []string
	for i := range 12 {
		name := fmt.Sprintf("f%02d.txt", i)
		names = append(names, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("committed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "twelve files")
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("edited by the user\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("untracked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status := porcelain(t, dir)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-dirty-1")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
	}
	want := "Your uncommitted changes to " + strings.Join(names[:10], ", ") + " and 2 more are not in this run: " +
		"it starts from HEAD without them (commit them first, or run with --in-place --allow-dirty to work on them)."
	if got := lineWith(t, out, "uncommitted"); got != want {
		t.Fatalf("dirty line\n got %q\nwant %q", got, want)
	}
	if strings.Contains(out, "notes.txt") {
		t.Fatalf("an untracked file is named:\n%s", out)
	}
	// What the line says is what happened: the run's branch starts at
	// HEAD, and the edits stay in the user's checkout.
	if got := gitOut(t, dir, "show", "gaffer/r-dirty-1:f00.txt"); got != "committed" {
		t.Fatalf("the run's branch has f00.txt = %q", got)
	}
	if got := porcelain(t, dir); got != status {
		t.Fatalf("the user's checkout changed:\n%s\nwas\n%s", got, status)
	}

	// A few paths are all named, with no "more".
	dir2, plan2, script2 := demoRepo(t)
	if err := os.WriteFile(filepath.Join(dir2, "doc.go"), []byte("package calc // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = gaffer(t, "--repo", dir2, "run", "--plan", plan2, "--script", script2, "--run-id", "r-dirty-2")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if got := lineWith(t, out, "uncommitted"); !strings.HasPrefix(got, "Your uncommitted changes to doc.go are not in this run") {
		t.Fatalf("dirty line: %q", got)
	}
}
