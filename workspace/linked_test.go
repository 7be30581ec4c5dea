package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	// A second call makes the tree again, with the included files copied
	// again by the caller.
	if again, err := f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base); err != nil || again.Root() != wt.Root() {
		t.Fatalf("again: %v", err)
	}
	if err := CopyFiles(f.dir, dir, inc); err != nil {
		t.Fatal(err)
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

// TestAddWorkTreeAfterAKilledAdd: `git worktree add` killed half-way
// leaves its record locked "initializing" and the directory half checked
// out, or not made at all; adding again makes a whole tree on the branch.
func TestAddWorkTreeAfterAKilledAdd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash func(t *testing.T, dir string)
	}{
		{"half checked out", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory not made", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", "a\n")
			f.write("b.txt", "b\n")
			base := f.commit("base")
			dir := filepath.Join(t.TempDir(), "wt", "r-1")
			if _, err := f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base); err != nil {
				t.Fatal(err)
			}
			// What git leaves when killed between its first and last step.
			locked := filepath.Join(f.dir, ".git", "worktrees", "r-1", "locked")
			if err := os.WriteFile(locked, []byte("initializing"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.crash(t, dir)

			wt, err := f.repo.AddWorkTree(f.ctx, dir, "gaffer/r-1", base)
			if err != nil {
				t.Fatalf("add after the crash: %v", err)
			}
			for _, name := range []string{"a.txt", "b.txt"} {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s not checked out: %v", name, err)
				}
			}
			if b, err := wt.Branch(f.ctx); err != nil || b != "gaffer/r-1" {
				t.Errorf("branch %q, %v", b, err)
			}
			if out := f.git("worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 2 || strings.Contains(out, "locked") {
				t.Errorf("git's records of work trees:\n%s", out)
			}
		})
	}
}

// TestAddWorkTreesAtOnce adds and removes work trees of one repository
// from many goroutines at once, as serve's workers do: each `git worktree
// prune` must not take the record another `git worktree add` is making.
func TestAddWorkTreesAtOnce(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	root := t.TempDir()
	const n = 8
	for round := range 10 {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir := filepath.Join(root, fmt.Sprintf("r-%d", i))
				if _, err := f.repo.AddWorkTree(f.ctx, dir, fmt.Sprintf("gaffer/r-%d", i), base); err != nil {
					errs[i] = err
					return
				}
				if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
					errs[i] = err
					return
				}
				errs[i] = f.repo.RemoveWorkTree(f.ctx, dir)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, tree %d: %v", round, i, err)
			}
		}
	}
	if out := f.git("worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("git's records of work trees after every tree was removed:\n%s", out)
	}
}

// TestAddWorkTreePacksLooseBranches: once LooseBranchesToPack run
// branches are loose, AddWorkTree packs the refs (a listing reads every
// run's branch, and git reads packed refs ten times faster); every branch
// still names its commit. Fewer loose branches are left loose.
func TestAddWorkTreePacksLooseBranches(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	loose := func() int {
		es, err := os.ReadDir(filepath.Join(f.dir, ".git", "refs", "heads", "gaffer"))
		if err != nil && !os.IsNotExist(err) { // git removes the emptied folder
			t.Fatal(err)
		}
		return len(es)
	}
	branches := func(from, n int) {
		var in strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&in, "create refs/heads/gaffer/b-%d %s\n", i, base)
		}
		cmd := exec.Command("git", "-C", f.dir, "update-ref", "--stdin")
		cmd.Stdin = strings.NewReader(in.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("update-ref: %v\n%s", err, out)
		}
	}

	branches(0, 10)
	if _, err := f.repo.AddWorkTree(f.ctx, filepath.Join(t.TempDir(), "r-few"), "gaffer/r-few", base); err != nil {
		t.Fatal(err)
	}
	if n := loose(); n != 11 {
		t.Fatalf("%d loose branches after a run's start, want the 11 left loose", n)
	}

	branches(10, LooseBranchesToPack)
	if n := loose(); n < LooseBranchesToPack {
		t.Fatalf("%d loose branches, want at least %d", n, LooseBranchesToPack)
	}
	if _, err := f.repo.AddWorkTree(f.ctx, filepath.Join(t.TempDir(), "r-many"), "gaffer/r-many", base); err != nil {
		t.Fatal(err)
	}
	if n := loose(); n != 0 {
		t.Fatalf("%d loose branches after a run's start, want them packed", n)
	}
	refs := strings.Fields(f.git("for-each-ref", "--format=%(objectname)", "refs/heads/gaffer/"))
	if len(refs) != LooseBranchesToPack+12 {
		t.Fatalf("%d run branches after packing, want %d", len(refs), LooseBranchesToPack+12)
	}
	for _, h := range refs {
		if h != base {
			t.Fatalf("a packed branch names %s, want %s", h, base)
		}
	}
	if got := strings.TrimSpace(f.git("rev-parse", "gaffer/b-7")); got != base {
		t.Fatalf("gaffer/b-7 = %s after packing, want %s", got, base)
	}
}

// TestRemoveWorkTreeOfACutShortAdd: a `git worktree add` killed after it
// made the directory (a run cancelled as its tree was made) leaves one git
// does not count as a work tree; RemoveWorkTree removes it rather than
// fail on git's "is not a working tree", and the run's branch can go.
func TestRemoveWorkTreeOfACutShortAdd(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	f.git("branch", "gaffer/r-cut", base)
	dir := filepath.Join(t.TempDir(), "wt", "r-cut")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.RemoveWorkTree(f.ctx, dir); err != nil {
		t.Fatalf("RemoveWorkTree of a directory git does not know: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the directory stays: %v", err)
	}
	if err := f.repo.DeleteBranch(f.ctx, "gaffer/r-cut"); err != nil {
		t.Fatal(err)
	}

	// A work tree git knows is removed by git, as before.
	known := filepath.Join(t.TempDir(), "wt", "r-known")
	if _, err := f.repo.AddWorkTree(f.ctx, known, "gaffer/r-known", base); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.RemoveWorkTree(f.ctx, known); err != nil {
		t.Fatal(err)
	}
	if wt := f.git("worktree", "list"); strings.Contains(wt, "r-known") {
		t.Fatalf("the work tree stays:\n%s", wt)
	}
}

// TestGitDir: a linked work tree's .git file points to its git directory
// (absolute, or relative to the work tree); a .git directory, a missing
// one or a file without a gitdir line is root/.git.
func TestGitDir(t *testing.T) {
	for _, c := range []struct {
		name string
		dot  func(root string) error // makes root/.git
		want func(root string) string
	}{
		{"linked", func(root string) error {
			return os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: /main/.git/worktrees/wt\n"), 0o644)
		}, func(string) string { return "/main/.git/worktrees/wt" }},
		{"relative", func(root string) error {
			return os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644)
		}, func(root string) string { return filepath.Join(filepath.Dir(root), "main/.git/worktrees/wt") }},
		{"directory", func(root string) error { return os.Mkdir(filepath.Join(root, ".git"), 0o755) },
			func(root string) string { return filepath.Join(root, ".git") }},
		{"missing", func(string) error { return nil }, func(root string) string { return filepath.Join(root, ".git") }},
		{"no gitdir line", func(root string) error {
			return os.WriteFile(filepath.Join(root, ".git"), []byte("something else\n"), 0o644)
		}, func(root string) string { return filepath.Join(root, ".git") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if err := c.dot(root); err != nil {
				t.Fatal(err)
			}
			if got, want := GitDir(root), c.want(root); got != want {
				t.Errorf("GitDir = %q, want %q", got, want)
			}
		})
	}
}
