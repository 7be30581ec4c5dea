package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunTreesLinked: a run's linked tree is made on its branch at the
// user's HEAD with the files .worktreeinclude names copied in; it is
// made again when removed by hand; Remove keeps the branch, Discard
// takes it too.
func TestRunTreesLinked(t *testing.T) {
	f := newFixture(t)
	f.write("README", "hello\n")
	f.write(IncludeFile, ".env\n")
	f.write(".gitignore", ".env\n")
	base := f.commit("base")
	f.write(".env", "TOKEN=x\n")
	trees := RunTrees{Repo: f.repo, Dir: filepath.Join(t.TempDir(), "trees")}

	dir, inputs, err := trees.Make(f.ctx, "r-1", "gaffer/r-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if dir != trees.Path("r-1") || !slices.Equal(inputs, []string{".env"}) {
		t.Fatalf("Make = %s, %v; want %s with .env", dir, inputs, trees.Path("r-1"))
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".env")); err != nil || string(b) != "TOKEN=x\n" {
		t.Fatalf("the tree's .env: %q, %v", b, err)
	}
	wt, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if head, _ := wt.Head(f.ctx); head != base {
		t.Fatalf("the tree is at %s, want the user's HEAD %s", head, base)
	}
	if got := trees.Runs(); !slices.Equal(got, []string{"r-1"}) {
		t.Fatalf("Runs = %v", got)
	}

	// Removed by hand: made again on its branch; there: left as it is.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if made, err := trees.Restore(f.ctx, dir, "gaffer/r-1"); err != nil || !made {
		t.Fatalf("Restore of a removed tree = %v, %v", made, err)
	}
	if made, err := trees.Restore(f.ctx, dir, "gaffer/r-1"); err != nil || made {
		t.Fatalf("Restore of a tree that is there = %v, %v", made, err)
	}

	if err := trees.Remove(f.ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed tree: %v", err)
	}
	if strings.TrimSpace(f.git("rev-parse", "gaffer/r-1")) != base {
		t.Fatal("Remove took the run's branch")
	}

	if _, _, err := trees.Make(f.ctx, "r-2", "gaffer/r-2", base); err != nil {
		t.Fatal(err)
	}
	if err := trees.Discard(f.ctx, "r-2", "gaffer/r-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(trees.Path("r-2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the discarded tree: %v", err)
	}
	if _, err := f.repo.Trailers(f.ctx, "gaffer/r-2"); err == nil {
		t.Fatal("Discard kept the run's branch")
	}
}

// TestRunTreesWithoutACommit: a repository without a commit, or a remote
// without one, is a *NoCommitError naming which.
func TestRunTreesWithoutACommit(t *testing.T) {
	f := newFixture(t)
	var none *NoCommitError
	if _, _, err := (RunTrees{Repo: f.repo, Dir: t.TempDir()}).Make(f.ctx, "r-1", "gaffer/r-1", ""); !errors.As(err, &none) || none.Remote != "" {
		t.Fatalf("Make in a repository without a commit: %v, want a NoCommitError", err)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	if _, err := Git(f.ctx, filepath.Dir(remote), "init", "-q", "--bare", remote); err != nil {
		t.Fatal(err)
	}
	trees := RunTrees{Repo: f.repo, Dir: t.TempDir(), Mirror: NewMirror(remote, filepath.Join(t.TempDir(), "mirror"))}
	if _, _, err := trees.Make(f.ctx, "r-1", "gaffer/r-1", ""); !errors.As(err, &none) || none.Remote != remote {
		t.Fatalf("Make on an empty remote: %v, want a NoCommitError naming it", err)
	}
}

// TestRunTreesOnARemote: on a remote, a run's branch is pushed at the
// remote's HEAD and the run's tree is a clone of it; a commit pushes
// with compare-and-swap (again after a crash: success), a branch moved
// by someone else is a *BranchMovedError; FirstParents reads the
// branch's history with a trailer's values.
func TestRunTreesOnARemote(t *testing.T) {
	f := newFixture(t)
	f.write("README", "hello\n")
	base := f.commit("base")
	remote := filepath.Join(t.TempDir(), "remote.git")
	if _, err := Git(f.ctx, filepath.Dir(remote), "clone", "-q", "--bare", f.dir, remote); err != nil {
		t.Fatal(err)
	}
	m := NewMirror(remote, filepath.Join(t.TempDir(), "mirror"))
	trees := RunTrees{Repo: f.repo, Dir: t.TempDir(), Mirror: m}
	dir, _, err := trees.Make(f.ctx, "r-1", "gaffer/r-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Tip(f.ctx, "gaffer/r-1") != base {
		t.Fatal("the run's branch was not pushed at the remote's HEAD")
	}
	if ok, err := trees.Usable(f.ctx, "r-1", "gaffer/r-1", base); !ok || err != nil {
		t.Fatalf("the new clone is not usable: %v", err)
	}
	clone, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	one, err := clone.Commit(f.ctx, "phase 1", []Trailer{{Key: "Gaffer-Run", Value: "r-1"}}, CommitOptions{Author: Signature{Name: "t", Email: "t@t"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second as after a crash between the push and its checkpoint
		if err := PushLease(f.ctx, dir, "gaffer/r-1", one, base); err != nil {
			t.Fatalf("PushLease: %v", err)
		}
	}
	if _, err := Git(f.ctx, remote, "update-ref", "refs/heads/gaffer/r-1", base); err != nil {
		t.Fatal(err)
	}
	var moved *BranchMovedError
	if err := PushLease(f.ctx, dir, "gaffer/r-1", one, "0123456789012345678901234567890123456789"); !errors.As(err, &moved) || moved.Tip != base {
		t.Fatalf("a push over someone else's branch: %v, want a BranchMovedError at %s", err, base)
	}
	if err := PushLease(f.ctx, dir, "gaffer/r-1", one, base); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(f.ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := m.FirstParents(f.ctx, one, 5, "Gaffer-Run")
	if err != nil || len(cs) != 2 || cs[0] != (CommitTrailer{Hash: one, Value: "r-1"}) || cs[1] != (CommitTrailer{Hash: base}) {
		t.Fatalf("FirstParents = %+v, %v", cs, err)
	}
	if ok, _ := trees.Usable(f.ctx, "r-1", "gaffer/r-1", base); ok {
		t.Fatal("a clone ahead of the tip is usable")
	}
	if err := trees.Reclone(f.ctx, "r-1", "gaffer/r-1", nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := trees.Usable(f.ctx, "r-1", "gaffer/r-1", one); !ok || err != nil {
		t.Fatalf("the clone made again is not at the tip: %v", err)
	}
}
