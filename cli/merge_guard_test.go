package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commitOnRunBranch adds a commit to run id's branch as its run would
// have made it: files written (content "" removes the file) in a work
// tree of the branch made for the purpose and removed after.
func commitOnRunBranch(t *testing.T, dir, id string, files map[string]string) {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	gitOut(t, dir, "worktree", "add", "-q", wt, "gaffer/"+id)
	for path, content := range files {
		p := filepath.Join(wt, filepath.FromSlash(path))
		if content == "" {
			gitOut(t, wt, "rm", "-q", path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		gitOut(t, wt, "add", "-f", path)
	}
	gitOut(t, wt, "-c", "user.name=R", "-c", "user.email=r@example.com", "commit", "-q", "-m", "the run's last phase")
	gitOut(t, dir, "worktree", "remove", wt)
}

// userCommit commits files in the user's checkout, on their branch.
func userCommit(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		gitOut(t, dir, "add", path)
	}
	gitOut(t, dir, "-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m", "the user's own")
}

// TestMergeNeverOverwritesFilesGitDoesNotTrack: the run's branch stops
// ignoring *.test and adds local.test, where the user keeps their own
// ignored local.test (git's fast-forward would replace it and say
// "Fast-forwarded"); it also adds eval.go, where the user has an
// untracked eval.go of their own (git refuses in lines of its own, exit
// 1). gaffer merge, through the binary, refuses both in one line naming
// them, exit 8, with --dry-run too; the files and HEAD are as they were.
// Moved aside, the merge goes.
func TestMergeNeverOverwritesFilesGitDoesNotTrack(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const id = "r-ignored"
	dir, plan, script := demoRepo(t) // its .gitignore: *.test
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	// The run's work adds eval.go; its last phase drops *.test.
	commitOnRunBranch(t, dir, id, map[string]string{".gitignore": "", "local.test": "the run's\n"})
	head := gitOut(t, dir, "rev-parse", "HEAD")
	mine := map[string]string{"local.test": "the user's own settings\n", "eval.go": "package calc // the user's, not yet added\n"}
	for p, c := range mine {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"merge", id}, {"merge", id, "--dry-run"}} {
		out, code := gafferCmd(t, bin, append([]string{"--repo", dir}, args...)...)
		want := "gaffer: files git does not track stand where gaffer/" + id + " would write (untracked eval.go; ignored local.test): move them aside, then gaffer --repo " + dir + " merge " + id + " (nothing was changed)\n"
		if code != ExitPrecondition || out != want {
			t.Fatalf("%v: exit %d, want %d and\n%q\ngot\n%q", args, code, ExitPrecondition, want, out)
		}
	}
	for p, c := range mine {
		if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != c {
			t.Errorf("%s is %q after the refused merge, want the user's %q", p, b, c)
		}
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("the refused merge moved HEAD")
	}
	for p := range mine {
		if err := os.Rename(filepath.Join(dir, p), filepath.Join(dir, p+".mine")); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := gafferCmd(t, bin, "--repo", dir, "merge", id); code != 0 || !strings.HasPrefix(out, "Fast-forwarded main to gaffer/"+id) {
		t.Fatalf("merge once they are aside: exit %d\n%s", code, out)
	}
}

// TestMergeLeavesTheUsersOwnMergeAlone: the user is in the middle of their
// own `git merge --no-commit` (MERGE_HEAD, MERGE_MSG, MERGE_MODE) when
// they run gaffer merge of a run whose branch needs a merge commit. It is
// refused before it starts, in one line naming the merge and how to end
// it, exit 8; the user's merge is as it was (gaffer's failed merge used
// to run git merge --abort, which deleted it).
func TestMergeLeavesTheUsersOwnMergeAlone(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const id = "r-theirs"
	dir := finishedRun(t, id)
	gitOut(t, dir, "checkout", "-q", "-b", "other")
	userCommit(t, dir, map[string]string{"OTHER.md": "other\n"})
	gitOut(t, dir, "checkout", "-q", "main")
	userCommit(t, dir, map[string]string{"NOTES.md": "mine\n"})
	gitOut(t, dir, "merge", "-q", "--no-commit", "--no-ff", "-s", "ours", "other")
	state := func() map[string]string {
		m := map[string]string{}
		for _, f := range []string{"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE"} {
			b, err := os.ReadFile(filepath.Join(dir, ".git", f))
			if err != nil {
				t.Fatalf("the user's merge has no %s: %v", f, err)
			}
			m[f] = string(b)
		}
		return m
	}
	before := state()
	head := gitOut(t, dir, "rev-parse", "HEAD")
	out, code := gafferCmd(t, bin, "--repo", dir, "merge", id)
	want := "gaffer: a git merge of yours is under way in your checkout: finish it, or end it with git merge --abort, then gaffer --repo " + dir + " merge " + id + " (nothing was changed)\n"
	if code != ExitPrecondition || out != want {
		t.Fatalf("exit %d, want %d and\n%q\ngot\n%q", code, ExitPrecondition, want, out)
	}
	after := state()
	for f, b := range before {
		if after[f] != b {
			t.Errorf("%s changed: %q, was %q", f, after[f], b)
		}
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("HEAD moved")
	}
}
