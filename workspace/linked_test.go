package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAddWorkTreeCommitsOnItsBranch(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	f.write(".gitignore", ".env\nbuild/\n")
	f.write(".env", "KEY=1\n")
	f.write("build/out", "x")
	f.write("notes.txt", "mine\n")
	f.write(IncludeFile, ".env\nnotes.txt\n")
	before := treeSnapshot(t, f.dir)

	inc, err := f.repo.Included(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(inc)
	if want := []string{".env", "notes.txt"}; !slices.Equal(inc, want) {
		t.Fatalf("Included = %v, want %v", inc, want)
	}
	dir := filepath.Join(t.TempDir(), "wt", "r-1")
	wt, err := f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base)
	if err != nil {
		t.Fatal(err)
	}
	if err := CopyFiles(f.dir, dir, inc); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".env")); err != nil || string(b) != "KEY=1\n" {
		t.Fatalf(".env in the work tree: %q, %v", b, err)
	}
	// Idempotent: a second call opens the same tree.
	if again, err := f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base); err != nil || again.Root() != wt.Root() {
		t.Fatalf("again: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(f.ctx, "phase 1", nil, CommitOptions{Exclude: []string{"notes.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(f.git("rev-parse", "gaffer/r-1")); got != h {
		t.Fatalf("branch at %s, want %s", got, h)
	}
	if got := f.head(); got != base {
		t.Fatalf("user's HEAD moved to %s", got)
	}
	if lock, err := wt.LockWorkTree("r-1"); err != nil {
		t.Fatalf("lock the linked work tree: %v", err)
	} else if l2, err := f.repo.LockWorkTree("r-2"); err != nil {
		t.Fatalf("the user's checkout has a lock of its own: %v", err)
	} else {
		l2.Unlock()
		lock.Unlock()
	}
	if err := f.repo.RemoveWorkTree(f.ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("work tree still there: %v", err)
	}
	if got := strings.TrimSpace(f.git("rev-parse", "gaffer/r-1")); got != h {
		t.Fatalf("branch lost: %s", got)
	}
	if after := treeSnapshot(t, f.dir); !equalSnap(before, after) {
		t.Fatalf("the user's checkout changed")
	}
	// Removing again, or re-adding on the existing branch, works.
	if err := f.repo.RemoveWorkTree(f.ctx, dir); err != nil {
		t.Fatal(err)
	}
	wt, err = f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := wt.Head(f.ctx); got != h {
		t.Fatalf("re-added at %s, want the branch's %s", got, h)
	}
}

func equalSnap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
