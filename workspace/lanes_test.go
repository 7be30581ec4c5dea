package workspace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// laneFixture is a repository with a base commit and the directory its
// lane trees go in.
func laneFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	f.write("a.txt", "one\ntwo\nthree\n")
	f.write("b.txt", "b\n")
	f.write("dir/c.txt", "c\n")
	f.writeMode("run.sh", "#!/bin/sh\n", 0o755)
	return f, f.commit("base")
}

// laneWork makes a lane tree at base, lets work change it, commits it
// and returns the commit; the tree is removed.
func laneWork(t *testing.T, f *fixture, name, base string, work func(l *fixture)) string {
	t.Helper()
	dir := filepath.Join(f.repo.LaneTrees(), "r-1", name)
	lr, err := f.repo.AddLaneTree(f.ctx, dir, base)
	if err != nil {
		t.Fatal(err)
	}
	l := &fixture{t: t, ctx: f.ctx, dir: dir, repo: lr, tick: 10}
	work(l)
	h := l.commitOpts("lane "+name, []Trailer{{Key: "Gaffer-Lane", Value: name}}, CommitOptions{AllowEmpty: true})
	if err := f.repo.SetRef(f.ctx, LaneRefPrefix+"r-1/p1/"+name, h); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.RemoveLaneTree(f.ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("lane tree %s is still there: %v", name, err)
	}
	return h
}

// TestLaneTreesCombineIntoThePhase: three lanes from one base, in their
// own trees, each unaware of the others; their commits are combined
// without touching the run's tree and then applied to it as uncommitted
// changes, which one commit takes. Two lanes that changed different
// lines of one file merge; the run's tree and index are untouched until
// ApplyTree.
func TestLaneTreesCombineIntoThePhase(t *testing.T) {
	f, base := laneFixture(t)
	h1 := laneWork(t, f, "1", base, func(l *fixture) {
		l.write("a.txt", "ONE\ntwo\nthree\n")
		l.write("new1.txt", "lane 1\n")
	})
	h2 := laneWork(t, f, "2", base, func(l *fixture) {
		if l.exists("new1.txt") {
			t.Error("lane 2 sees lane 1's file")
		}
		l.write("a.txt", "one\ntwo\nTHREE\n")
		l.remove("b.txt")
	})
	// A lane that only adds a directory and makes run.sh plain.
	h3 := laneWork(t, f, "3", base, func(l *fixture) {
		l.write("pkg/x/y.go", "package x\n")
		l.chmod("run.sh", 0o644)
	})
	before := f.porcelain()
	c, err := f.repo.Combine(f.ctx, base, []string{h1, h2, "", h3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Merged, []int{0, 1, 3}) || len(c.Conflicts) != 0 {
		t.Fatalf("merged %v, conflicts %+v", c.Merged, c.Conflicts)
	}
	again, err := f.repo.Combine(f.ctx, base, []string{h1, h2, "", h3})
	if err != nil || again.Commit != c.Commit || again.Tree != c.Tree {
		t.Fatalf("the same heads combined twice: %+v then %+v (%v)", c, again, err)
	}
	if after := f.porcelain(); !slices.Equal(before, after) || f.head() != base {
		t.Fatalf("Combine touched the run's tree: %v → %v", before, after)
	}
	written, err := f.repo.ApplyTree(f.ctx, base, c.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if f.read("a.txt") != "ONE\ntwo\nTHREE\n" || f.read("new1.txt") != "lane 1\n" || f.read("pkg/x/y.go") != "package x\n" || f.exists("b.txt") {
		t.Fatalf("tree after ApplyTree:\n%s", f.git("status", "--short"))
	}
	if fi, err := os.Stat(f.abs("run.sh")); err != nil || fi.Mode()&0o111 != 0 {
		t.Errorf("run.sh's mode after ApplyTree: %v %v", fi.Mode(), err)
	}
	want := []string{"a.txt", "b.txt", "new1.txt", "pkg/x/y.go", "run.sh"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for p := range written {
			if !yield(p) {
				return
			}
		}
	}); !slices.Equal(got, want) || written["new1.txt"] == "" || written["b.txt"] != "" {
		t.Fatalf("written %v, want %v", written, want)
	}
	// Run again (a crash after it): nothing to do, the same answer.
	if again, err := f.repo.ApplyTree(f.ctx, base, c.Commit); err != nil || len(again) != len(written) {
		t.Fatalf("ApplyTree again: %v, %v", again, err)
	}
	phase := f.commit("phase 1")
	if got := strings.TrimSpace(f.git("rev-parse", phase+"^{tree}")); got != c.Tree {
		t.Fatalf("the phase's commit has tree %s, the combined lanes %s", got, c.Tree)
	}
}

// TestCombineNamesAConflictAndGoesOn: a lane that changed the lines
// another lane changed conflicts; it is left out with its paths, the
// lanes after it still merge, and the lane run again on the combined
// commit then merges as a fast-forward.
func TestCombineNamesAConflictAndGoesOn(t *testing.T) {
	f, base := laneFixture(t)
	h1 := laneWork(t, f, "1", base, func(l *fixture) { l.write("a.txt", "uno\ntwo\nthree\n") })
	h2 := laneWork(t, f, "2", base, func(l *fixture) {
		l.write("a.txt", "eins\ntwo\nthree\n")
		l.write("two.txt", "2\n")
	})
	h3 := laneWork(t, f, "3", base, func(l *fixture) { l.write("three.txt", "3\n") })
	c, err := f.repo.Combine(f.ctx, base, []string{h1, h2, h3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Merged, []int{0, 2}) || len(c.Conflicts) != 1 || c.Conflicts[0].Lane != 1 || !slices.Equal(c.Conflicts[0].Paths, []string{"a.txt"}) {
		t.Fatalf("combined %+v", c)
	}
	// Lane 2 again, alone, on top of the others' work.
	h2b := laneWork(t, f, "2-again", c.Commit, func(l *fixture) {
		if l.read("a.txt") != "uno\ntwo\nthree\n" || !l.exists("three.txt") {
			t.Error("the re-run lane does not start from the combined work")
		}
		l.write("a.txt", "uno eins\ntwo\nthree\n")
		l.write("two.txt", "2\n")
	})
	c2, err := f.repo.Combine(f.ctx, base, []string{h1, h2b, h3})
	if err != nil {
		t.Fatal(err)
	}
	if len(c2.Conflicts) != 0 || len(c2.Merged) != 3 {
		t.Fatalf("second combine %+v", c2)
	}
	for p, want := range map[string]string{"a.txt": "uno eins\ntwo\nthree\n", "two.txt": "2\n", "three.txt": "3\n"} {
		if got := f.git("show", c2.Commit+":"+p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

// TestApplyTreeRefusesOthersEdits: a path the combined work changes that
// someone edited in the run's tree meanwhile is not overwritten; nothing
// is changed and the path is named.
func TestApplyTreeRefusesOthersEdits(t *testing.T) {
	f, base := laneFixture(t)
	h := laneWork(t, f, "1", base, func(l *fixture) {
		l.write("a.txt", "lane\n")
		l.write("b.txt", "lane b\n")
	})
	f.write("a.txt", "the user's\n")
	_, err := f.repo.ApplyTree(f.ctx, base, h)
	var de *DirtyError
	if !errors.As(err, &de) || !slices.Equal(de.Paths, []string{"a.txt"}) {
		t.Fatalf("ApplyTree over an edit: %v", err)
	}
	if f.read("a.txt") != "the user's\n" || f.read("b.txt") != "b\n" {
		t.Fatal("ApplyTree changed files although it refused")
	}
}

// TestLaneTreesAtOnce adds and removes lane trees from several goroutines
// while the run's own work tree is made (which prunes git's records): no
// add fails, every tree is at its base with its own HEAD.
func TestLaneTreesAtOnce(t *testing.T) {
	f, base := laneFixture(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				dir := filepath.Join(f.repo.LaneTrees(), "r-2", string(rune('a'+i))+strconv.Itoa(round))
				lr, err := f.repo.AddLaneTree(f.ctx, dir, base)
				if err != nil {
					errs <- err
					return
				}
				if h, err := lr.Head(f.ctx); err != nil || h != base {
					errs <- errors.Join(err, errors.New("lane tree not at base: "+h))
				}
				if st, err := lr.Status(f.ctx); err != nil || !st.IsClean() {
					errs <- errors.Join(err, fmt.Errorf("lane tree not clean: %v", st))
				}
				errs <- f.repo.RemoveLaneTree(f.ctx, dir)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		wt := filepath.Join(t.TempDir(), "run-tree")
		if _, err := f.repo.AddWorkTree(f.ctx, wt, "gaffer/r-2", base); err != nil {
			errs <- err
			return
		}
		errs <- f.repo.RemoveWorkTree(f.ctx, wt)
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if left := strings.TrimSpace(f.git("worktree", "list", "--porcelain")); strings.Count(left, "worktree ") != 1 {
		t.Errorf("git still knows other work trees:\n%s", left)
	}
}

// TestAddLaneTreeReplacesALeftover: a lane tree a killed process left
// half made (a directory with a stray file, git's record of it) is
// replaced by a fresh one at the base asked for.
func TestAddLaneTreeReplacesALeftover(t *testing.T) {
	f, base := laneFixture(t)
	dir := filepath.Join(f.repo.LaneTrees(), "r-3", "1")
	if _, err := f.repo.AddLaneTree(f.ctx, dir, base); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "half.txt"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	lr, err := f.repo.AddLaneTree(f.ctx, dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "half.txt")); !os.IsNotExist(err) {
		t.Error("the leftover's file is still there")
	}
	if st, err := lr.Status(f.ctx); err != nil || !st.IsClean() {
		t.Errorf("fresh lane tree not clean: %v %v", st, err)
	}
	// A record without its directory (the directory removed by hand).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repo.AddLaneTree(f.ctx, dir, base); err != nil {
		t.Fatalf("over a record without its directory: %v", err)
	}
}

// TestAddLaneTreeKeepsAnotherTreesRecord: two runs' lanes of the same
// name take git records p2-l2 and p2-l22. A process killed in laneRecord
// after writing its tree's .git file, before renaming its record into
// place, leaves that file naming the other run's record; remaking (or
// removing) the killed run's tree must not take the other's record.
func TestAddLaneTreeKeepsAnotherTreesRecord(t *testing.T) {
	f, base := laneFixture(t)
	a := filepath.Join(f.repo.LaneTrees(), "r-a", "p2-l2")
	la, err := f.repo.AddLaneTree(f.ctx, a, base)
	if err != nil {
		t.Fatal(err)
	}
	aGit, err := os.ReadFile(filepath.Join(a, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	// The killed run's tree: its .git file names a's record.
	b := filepath.Join(f.repo.LaneTrees(), "r-b", "p2-l2")
	if err := os.MkdirAll(b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, ".git"), aGit, 0o600); err != nil {
		t.Fatal(err)
	}
	lb, err := f.repo.AddLaneTree(f.ctx, b, base)
	if err != nil {
		t.Fatalf("remaking the killed run's lane tree: %v", err)
	}
	for name, lr := range map[string]*Repo{"the other run's": la, "the remade": lb} {
		if st, err := lr.Status(f.ctx); err != nil || !st.IsClean() {
			t.Errorf("%s lane tree after the remake: status %v, %v; want it whole and clean", name, st, err)
		}
	}
	if err := f.repo.RemoveLaneTree(f.ctx, b); err != nil {
		t.Fatal(err)
	}
	if st, err := la.Status(f.ctx); err != nil || !st.IsClean() {
		t.Errorf("the other run's lane tree after the remade one's removal: status %v, %v", st, err)
	}
}

// TestCombineIsGitsMerge checks the in-process merge of lanes that
// changed paths apart against git merge-tree doing every merge: random
// lanes adding, changing and removing files, in directories apart, nested
// or the same, must combine to the tree git makes, conflicts and all.
func TestCombineIsGitsMerge(t *testing.T) {
	f, _ := laneFixture(t)
	for i := range 6 {
		f.write(filepath.Join("d"+strconv.Itoa(i%3), "f"+strconv.Itoa(i)+".txt"), "line 1\nline 2\nline 3\n")
	}
	base := f.commit("more files")
	rng := rand.New(rand.NewPCG(31, 7))
	for round := range 6 {
		var heads []string
		for k := range 3 + rng.IntN(3) {
			heads = append(heads, laneWork(t, f, fmt.Sprintf("r%d-%d", round, k), base, func(l *fixture) {
				for range 1 + rng.IntN(3) {
					p := filepath.Join("d"+strconv.Itoa(rng.IntN(4)), "f"+strconv.Itoa(rng.IntN(8))+".txt")
					switch rng.IntN(4) {
					case 0:
						if l.exists(p) {
							l.remove(p)
						}
					case 1:
						l.write(p, fmt.Sprintf("lane %d round %d\nline 2\nline 3\n", k, round))
					default:
						l.write(p, fmt.Sprintf("line 1\nline 2\nline 3 of lane %d\n", k))
					}
				}
			}))
		}
		c, err := f.repo.Combine(f.ctx, base, heads)
		if err != nil {
			t.Fatal(err)
		}
		// git alone: each head merged into what merged so far.
		cur, tree := base, strings.TrimSpace(f.git("rev-parse", base+"^{tree}"))
		var conflicts []int
		for i, h := range heads {
			out, err := gitMayFail(f.dir, "merge-tree", "--write-tree", "--name-only", "--no-messages", cur, h)
			if err != nil {
				conflicts = append(conflicts, i)
				continue
			}
			tree = strings.TrimSpace(strings.Split(out, "\n")[0])
			cur = strings.TrimSpace(runGit(t, f.dir, "commit-tree", tree, "-p", cur, "-p", h, "-m", "m"))
		}
		var got []int
		for _, cf := range c.Conflicts {
			got = append(got, cf.Lane)
		}
		if c.Tree != tree || !slices.Equal(got, conflicts) {
			t.Fatalf("round %d: Combine made tree %s with conflicts %v; git %s with %v", round, c.Tree, got, tree, conflicts)
		}
	}
}

// TestCommitCheckSeesTheCommitAndCanStopIt: Check is given every path the
// commit changes, with their hashes in the commit and at HEAD; an error
// from it leaves HEAD, the index and the tree as they were.
func TestCommitCheckSeesTheCommitAndCanStopIt(t *testing.T) {
	f, base := laneFixture(t)
	f.write("a.txt", "changed\n")
	f.remove("b.txt")
	f.write("new.txt", "new\n")
	f.write("notes.txt", "the user's\n")
	before := f.porcelain()
	stop := errors.New("not this commit")
	var changed []string
	var newHash, headA, headNew string
	_, err := f.repo.Commit(f.ctx, "x", nil, CommitOptions{Author: testAuthor, Exclude: []string{"notes.txt"},
		Check: func(c []string, file, head func(string) string) error {
			changed, newHash, headA, headNew = c, file("new.txt"), head("a.txt"), head("new.txt")
			return stop
		}})
	if !errors.Is(err, stop) {
		t.Fatalf("Commit = %v, want the check's error", err)
	}
	if !slices.Equal(changed, []string{"a.txt", "b.txt", "new.txt"}) || newHash == "" || headA == "" || headNew != "" {
		t.Fatalf("check saw %v, new.txt %q, HEAD's a.txt %q, HEAD's new.txt %q", changed, newHash, headA, headNew)
	}
	if f.head() != base || !slices.Equal(f.porcelain(), before) {
		t.Fatalf("a stopped commit changed HEAD or the tree: %v", f.porcelain())
	}
	if _, err := f.repo.Commit(f.ctx, "x", nil, CommitOptions{Author: testAuthor, Exclude: []string{"notes.txt"},
		Check: func([]string, func(string) string, func(string) string) error { return nil }}); err != nil {
		t.Fatal(err)
	}
}
