package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// finishedRun runs the demo's plan to the end the default way (its own
// branch and work tree) and returns the repository and the run's id.
func finishedRun(t *testing.T, id string) string {
	t.Helper()
	dir, plan, script := demoRepo(t)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "gaffer --repo "+dir+" merge "+id) { // as typed from here: --repo named
		t.Fatalf("the finished run does not name the merge command:\n%s", out)
	}
	return dir
}

// TestMergeTakesARunsWorkIntoTheUsersBranch: --dry-run says what it would
// do and changes nothing; a dirty tree is refused in one line, exit 8,
// untouched; then the merge fast-forwards the user's branch to the run's
// and says so; a second merge has nothing to do.
func TestMergeTakesARunsWorkIntoTheUsersBranch(t *testing.T) {
	t.Parallel()
	const id = "r-merge1"
	dir := finishedRun(t, id)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	tip := gitOut(t, dir, "rev-parse", "gaffer/"+id)

	out, code := gaffer(t, "--repo", dir, "merge", id, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "Would fast-forward main to gaffer/"+id+": 5 commits, "+base[:7]+".."+tip[:7]+". Nothing was changed;") {
		t.Fatalf("--dry-run: exit %d\n%s", code, out)
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != base {
		t.Fatal("--dry-run moved main")
	}

	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/calc // mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = gaffer(t, "--repo", dir, "merge", id)
	want := "gaffer: your checkout has uncommitted changes to go.mod: commit or stash them, then gaffer --repo " + dir + " merge " + id + "\n"
	if code != ExitPrecondition || out != want {
		t.Fatalf("dirty tree: exit %d, want %d and %q; got\n%q", code, ExitPrecondition, want, out)
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != base || !strings.Contains(gitOut(t, dir, "status", "--porcelain"), "M go.mod") {
		t.Fatal("the refused merge changed the checkout")
	}
	gitOut(t, dir, "checkout", "--", "go.mod")

	out, code = gaffer(t, "--repo", dir, "merge", id)
	if code != 0 || !strings.HasPrefix(out, "Fast-forwarded main to gaffer/"+id+": 5 commits, ") || !strings.Contains(out, "gaffer --repo "+dir+" delete "+id) {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != tip || gitOut(t, dir, "branch", "--show-current") != "main" {
		t.Fatal("main is not at the run's tip after the merge")
	}
	if _, err := os.Stat(filepath.Join(dir, "eval.go")); err != nil {
		t.Fatalf("the run's work is not in the checkout: %v", err)
	}
	out, code = gaffer(t, "--repo", dir, "merge", id)
	if code != 0 || out != "Nothing to merge: main has every commit of gaffer/"+id+" already.\n" {
		t.Fatalf("second merge: exit %d\n%s", code, out)
	}
}

// TestMergeRefusesAConflictAndMakesMergeCommits: the user's own commit on
// main that conflicts with the run's work is refused in one line naming
// the file, exit 8, nothing changed; one that does not conflict gets a
// merge commit naming the run.
func TestMergeRefusesAConflictAndMakesMergeCommits(t *testing.T) {
	const id = "r-merge2"
	dir := finishedRun(t, id)
	commit := func(path, content, msg string) {
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		gitOut(t, dir, "add", path)
		gitOut(t, dir, "-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m", msg)
	}
	commit("calc_test.go", "package calc // the user's own\n", "mine")
	mine := gitOut(t, dir, "rev-parse", "HEAD")
	for _, args := range [][]string{{"merge", id}, {"merge", id, "--dry-run"}} {
		out, code := gaffer(t, append([]string{"--repo", dir}, args...)...)
		want := "gaffer: gaffer/" + id + " conflicts with main in calc_test.go: nothing was changed; merge it yourself with git merge gaffer/" + id + "\n"
		if code != ExitPrecondition || out != want {
			t.Fatalf("%v: exit %d, want %d and %q; got\n%q", args, code, ExitPrecondition, want, out)
		}
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != mine || gitOut(t, dir, "status", "--porcelain") != "" {
		t.Fatal("the refused merge changed the checkout")
	}

	gitOut(t, dir, "reset", "-q", "--hard", "HEAD~1")
	commit("NOTES.md", "my notes\n", "notes")
	t.Setenv("GIT_AUTHOR_NAME", "U")
	t.Setenv("GIT_AUTHOR_EMAIL", "u@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "U")
	t.Setenv("GIT_COMMITTER_EMAIL", "u@example.com")
	out, code := gaffer(t, "--repo", dir, "merge", id)
	if code != 0 || !strings.HasPrefix(out, "Merged gaffer/"+id+" into main: 5 commits, merge commit ") {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	if subj := gitOut(t, dir, "log", "-1", "--format=%s"); !strings.HasPrefix(subj, "Merge gaffer run "+id+": ") {
		t.Fatalf("merge commit's subject %q", subj)
	}
	if gitOut(t, dir, "rev-list", "--count", "HEAD..gaffer/"+id) != "0" {
		t.Fatal("main lacks commits of the run's branch")
	}
}

// TestMergeRefusesAnUnfinishedRun: a run waiting for approval is exit 8;
// without RUN it is a usage error.
func TestMergeRefusesAnUnfinishedRun(t *testing.T) {
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-wait"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "merge", "r-wait")
	if code != ExitPrecondition || out != "gaffer: run r-wait is awaiting_approval: merge it once it has finished (gaffer --repo "+dir+" status r-wait)\n" {
		t.Fatalf("exit %d\n%q", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "merge"); code != ExitUsage {
		t.Fatalf("no RUN: exit %d\n%s", code, out)
	}
}
