package workspace

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestInTheWay: the paths that stand where added paths go — an added path
// that exists, a leading directory that is a file — each once; nothing
// below a directory that is not there.
func TestInTheWay(t *testing.T) {
	tree := map[string]bool{ // path → is a directory
		"local.test": false, "docs": false, "build": true, "build/out": false, "src": true,
	}
	stat := func(p string) (bool, bool) { d, ok := tree[p]; return d, ok }
	got := inTheWay([]string{"local.test", "docs/a.md", "docs/b.md", "build/out", "src/new.go", "gone/x", "new.go", "build"}, stat)
	want := []string{"local.test", "docs", "build/out", "build"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("inTheWay = %v, want %v", got, want)
	}
}

// TestMergeRefusesFilesGitDoesNotTrack: a run's branch that stops
// ignoring *.test and adds local.test would replace the user's own
// ignored local.test without a word from git; an untracked file at a path
// it adds, or where it needs a directory, git refuses in lines of its
// own. Each is refused before anything changes, named, for a
// fast-forward and for a merge commit.
func TestMergeRefusesFilesGitDoesNotTrack(t *testing.T) {
	f := newFixture(t)
	mergeIdentity(t)
	f.write(".gitignore", "*.test\n")
	f.write("a.go", "package a\n")
	f.commit("initial")
	f.git("checkout", "-q", "-b", "gaffer/r1")
	f.write(".gitignore", "")
	f.write("local.test", "the run's\n")
	f.write("new.go", "package a // the run's\n")
	f.write("docs/guide.md", "the run's guide\n")
	f.commit("phase 1")
	f.git("checkout", "-q", "main")

	f.write("local.test", "the user's own, ignored\n")
	f.write("new.go", "package a // the user's, untracked\n")
	f.write("docs", "a file where the run needs a directory\n")
	for _, ff := range []bool{true, false} {
		if !ff {
			f.write("b.go", "package a // the user's commit\n")
			f.git("add", "b.go")
			f.git("commit", "-q", "-m", "mine")
		}
		head := f.head()
		for _, op := range []string{"plan", "merge"} {
			var err error
			if op == "plan" {
				_, err = f.repo.PlanMerge(f.ctx, "gaffer/r1")
			} else {
				_, err = f.repo.MergeBranch(f.ctx, "gaffer/r1", "m")
			}
			var e *InTheWayError
			if !errors.As(err, &e) || !errors.Is(err, ErrInTheWay) {
				t.Fatalf("fast-forward %v, %s: err %v, want an InTheWayError", ff, op, err)
			}
			if !reflect.DeepEqual(e.Untracked, []string{"docs", "new.go"}) || !reflect.DeepEqual(e.Ignored, []string{"local.test"}) {
				t.Fatalf("fast-forward %v, %s: untracked %v, ignored %v", ff, op, e.Untracked, e.Ignored)
			}
		}
		if f.head() != head || f.read("local.test") != "the user's own, ignored\n" || f.read("docs") != "a file where the run needs a directory\n" {
			t.Fatalf("fast-forward %v: the refused merge changed the checkout", ff)
		}
	}
	// Moved aside, the merge goes.
	f.remove("local.test")
	f.remove("new.go")
	f.remove("docs")
	if _, err := f.repo.MergeBranch(f.ctx, "gaffer/r1", "m"); err != nil {
		t.Fatal(err)
	}
	if f.read("local.test") != "the run's\n" {
		t.Fatal("the merge did not bring local.test")
	}
}

// TestMergeRefusesTheUsersOwnOperation: with the user's own merge
// (`git merge --no-commit`), cherry-pick, rebase or bisect under way,
// a merge is refused before it starts, naming it, and what git keeps for
// it (MERGE_HEAD, MERGE_MSG, MERGE_MODE, …) stays: gaffer never aborts what
// it did not start.
func TestMergeRefusesTheUsersOwnOperation(t *testing.T) {
	for _, tc := range []struct {
		op    string
		start func(f *fixture)
		kept  []string
	}{
		{"merge", func(f *fixture) { f.git("merge", "-q", "--no-commit", "--no-ff", "-s", "ours", "other") }, []string{"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE"}},
		{"cherry-pick", func(f *fixture) { gitMayFail(f.dir, "cherry-pick", "other") }, []string{"CHERRY_PICK_HEAD"}},
		{"rebase", func(f *fixture) { gitMayFail(f.dir, "rebase", "other") }, []string{"rebase-merge"}},
		{"bisect", func(f *fixture) { f.git("bisect", "start") }, []string{"BISECT_START"}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			f := newFixture(t)
			mergeIdentity(t)
			f.write("a.go", "package a\n")
			f.commit("initial")
			f.runBranch("b.go", "package a // run\n")
			f.git("checkout", "-q", "-b", "other")
			f.write("a.go", "package a // other\n")
			f.commit("other")
			f.git("checkout", "-q", "main")
			f.write("a.go", "package a // mine\n")
			f.commit("mine")
			tc.start(f)
			before := map[string]string{}
			for _, k := range tc.kept {
				fi, err := os.Stat(f.abs(".git/" + k))
				if err != nil {
					t.Fatalf("git keeps no %s for the user's %s: %v", k, tc.op, err)
				}
				before[k] = fi.ModTime().String()
			}
			_, err := f.repo.MergeBranch(f.ctx, "gaffer/r1", "m")
			var e *InProgressError
			if !errors.As(err, &e) || e.Op != tc.op {
				t.Fatalf("err %v, want an InProgressError of %s", err, tc.op)
			}
			if !strings.Contains(e.Finish(), tc.op) {
				t.Errorf("Finish() = %q", e.Finish())
			}
			for _, k := range tc.kept {
				fi, err := os.Stat(f.abs(".git/" + k))
				if err != nil || fi.ModTime().String() != before[k] {
					t.Errorf("%s of the user's %s was touched: %v", k, tc.op, err)
				}
			}
		})
	}
}

// TestBranchMergedNeedsABranch: a run's branch that only a detached HEAD
// holds (`git checkout --detach gaffer/r1`) is not merged: deleting it
// would leave its commits in the reflog alone. Once a branch of the
// user's has them, it is.
func TestBranchMergedNeedsABranch(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "package a\n")
	f.commit("initial")
	tip := f.runBranch("a.go", "package a // run\n")
	f.git("checkout", "-q", "--detach", "gaffer/r1")
	if ok, err := f.repo.BranchMerged(f.ctx, "gaffer/r1", "gaffer/"); err != nil || ok {
		t.Fatalf("BranchMerged with a detached HEAD on the branch = %v, %v; want false", ok, err)
	}
	f.git("branch", "keep", tip)
	if ok, err := f.repo.BranchMerged(f.ctx, "gaffer/r1", "gaffer/"); err != nil || !ok {
		t.Fatalf("BranchMerged with a branch of the user's on it = %v, %v; want true", ok, err)
	}
}
