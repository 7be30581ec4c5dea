package workspace

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// addStep is one step of `git worktree add -b BRANCH DIR BASE` as git
// 2.39 takes them (strace -f of it), each leaving the repository as a
// kill right after it would: the child `git branch`, then in
// add_worktree the record's directory, its "locked" file, the work
// tree's directory, the record's gitdir, the tree's .git file, the
// record's HEAD (a null id) and commondir, the child `git symbolic-ref
// HEAD`, the child `git reset --hard`, and the lock's removal. The
// children take lock files (the branch's, HEAD's, the index's) that a
// kill inside them leaves: those moments are steps of their own.
type addStep struct {
	name string
	do   func(w *cutShort)
}

// cutShort is the state of one cut-short add being built.
type cutShort struct {
	f                *fixture
	dir, rec, branch string
	base             string
}

func (w *cutShort) write(path, content string) {
	w.f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.f.t.Fatal(err)
	}
}

func (w *cutShort) mkdir(path string) {
	w.f.t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		w.f.t.Fatal(err)
	}
}

func (w *cutShort) branchRef() string {
	return filepath.Join(w.f.dir, ".git", "refs", "heads", filepath.FromSlash(w.branch))
}

var addSteps = []addStep{
	{"branch locked", func(w *cutShort) { w.write(w.branchRef()+".lock", w.base+"\n") }},
	{"branch made", func(w *cutShort) {
		os.Remove(w.branchRef() + ".lock")
		w.f.git("branch", w.branch, w.base)
	}},
	{"record made", func(w *cutShort) { w.mkdir(w.rec) }},
	{"record locked", func(w *cutShort) { w.write(filepath.Join(w.rec, "locked"), "initializing") }},
	{"tree made", func(w *cutShort) { w.mkdir(w.dir) }},
	{"gitdir written", func(w *cutShort) {
		real, err := filepath.EvalSymlinks(w.dir)
		if err != nil {
			w.f.t.Fatal(err)
		}
		w.write(filepath.Join(w.rec, "gitdir"), filepath.Join(real, ".git")+"\n")
	}},
	{".git written", func(w *cutShort) { w.write(filepath.Join(w.dir, ".git"), "gitdir: "+w.rec+"\n") }},
	{"HEAD written", func(w *cutShort) { w.write(filepath.Join(w.rec, "HEAD"), strings.Repeat("0", 40)+"\n") }},
	{"commondir written", func(w *cutShort) { w.write(filepath.Join(w.rec, "commondir"), "../..\n") }},
	{"HEAD locked", func(w *cutShort) { w.write(filepath.Join(w.rec, "HEAD.lock"), "ref: refs/heads/"+w.branch+"\n") }},
	{"HEAD on the branch", func(w *cutShort) {
		os.Remove(filepath.Join(w.rec, "HEAD.lock"))
		w.write(filepath.Join(w.rec, "HEAD"), "ref: refs/heads/"+w.branch+"\n")
	}},
	{"index locked, one file out", func(w *cutShort) {
		w.write(filepath.Join(w.rec, "index.lock"), "")
		w.write(filepath.Join(w.dir, "a.txt"), "a\n")
	}},
	{"checked out", func(w *cutShort) {
		os.Remove(filepath.Join(w.rec, "index.lock"))
		os.Remove(filepath.Join(w.dir, "a.txt"))
		runGit(w.f.t, w.dir, "reset", "-q", "--hard")
	}},
	{"HEAD and branch locked by the reset", func(w *cutShort) {
		w.write(filepath.Join(w.rec, "HEAD.lock"), w.base+"\n")
		w.write(w.branchRef()+".lock", w.base+"\n")
	}},
	{"reset done", func(w *cutShort) {
		os.Remove(filepath.Join(w.rec, "HEAD.lock"))
		os.Remove(w.branchRef() + ".lock")
	}},
	{"unlocked", func(w *cutShort) { os.Remove(filepath.Join(w.rec, "locked")) }},
}

// TestRemoveWorkTreeAtEveryStepOfAnAdd: whatever step of its `git
// worktree add` a run's start was killed after (so before the next),
// RemoveWorkTree and DeleteBranch leave nothing of it: no directory, no
// record of git's, no branch, no lock file; git lists no work tree but
// the checkout, and the same tree is made again at once, under its own
// name (not "r-cut1" beside a stale record).
func TestRemoveWorkTreeAtEveryStepOfAnAdd(t *testing.T) {
	for k := 0; k <= len(addSteps); k++ {
		name := "nothing"
		if k > 0 {
			name = addSteps[k-1].name
		}
		t.Run(fmt.Sprintf("%02d after %s", k, name), func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", "a\n")
			base := f.commit("base")
			w := &cutShort{f: f, dir: filepath.Join(t.TempDir(), "wt", "r-cut"), rec: filepath.Join(f.dir, ".git", "worktrees", "r-cut"),
				branch: "gaffer/r-cut", base: base}
			for _, s := range addSteps[:k] {
				s.do(w)
			}
			if k == len(addSteps) {
				// The model's last state is what git leaves.
				if wt := f.git("worktree", "list", "--porcelain"); !strings.Contains(wt, "branch refs/heads/gaffer/r-cut") {
					t.Fatalf("the whole add is not a work tree to git:\n%s", wt)
				}
			}
			leavesNothing(t, f, w.dir, w.branch, base)
		})
	}
}

// leavesNothing removes the work tree dir and branch as a run's discarded
// start does, checks nothing of them is left, and that the tree is made
// again as new.
func leavesNothing(t *testing.T, f *fixture, dir, branch, base string) {
	t.Helper()
	if err := f.repo.RemoveWorkTree(f.ctx, dir); err != nil {
		t.Fatalf("RemoveWorkTree: %v", err)
	}
	if err := f.repo.DeleteBranch(f.ctx, branch); err != nil {
		t.Fatalf("DeleteBranch: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory stays: %v", err)
	}
	if recs, _ := os.ReadDir(filepath.Join(f.dir, ".git", "worktrees")); len(recs) != 0 {
		t.Errorf("git's records stay: %v", recs)
	}
	if out := f.git("for-each-ref", "refs/heads/gaffer/"); out != "" {
		t.Errorf("the branch stays: %s", out)
	}
	if locks, _ := filepath.Glob(filepath.Join(f.dir, ".git", "refs", "heads", "gaffer", "*.lock")); len(locks) != 0 {
		t.Errorf("lock files stay: %v", locks)
	}
	if wt := strings.TrimSpace(f.git("worktree", "list", "--porcelain")); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("git lists more than the checkout:\n%s", wt)
	}
	wt, err := f.repo.AddWorkTree(f.ctx, dir, branch, base)
	if err != nil {
		t.Fatalf("the tree is not made again: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(wt.Root(), "a.txt")); string(got) != "a\n" {
		t.Errorf("the new tree's a.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, ".git", "worktrees", filepath.Base(dir))); err != nil {
		t.Errorf("the new tree's record is not %s: %v", filepath.Base(dir), err)
	}
	if err := f.repo.RemoveWorkTree(f.ctx, dir); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveWorkTreeOfARealAddKilled kills a real `git worktree add`
// with SIGKILL before each of the git commands it runs as children (its
// `git branch`, `git symbolic-ref HEAD`, `git reset --hard`), with them
// held at their start by a git of the test's in GIT_EXEC_PATH: what each
// kill leaves is removed whole, and the tree is made again.
func TestRemoveWorkTreeOfARealAddKilled(t *testing.T) {
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	realGit := filepath.Join(strings.TrimSpace(string(execPath)), "git")
	for _, child := range []string{"branch", "symbolic-ref", "reset"} {
		t.Run(child, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", "a\n")
			base := f.commit("base")
			hold := t.TempDir()
			marker := filepath.Join(hold, "held")
			wrapper := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = %q ]; then : > %q; exec sleep 60; fi\nGIT_EXEC_PATH=%q exec %q \"$@\"\n",
				child, marker, filepath.Dir(realGit), realGit)
			if err := os.WriteFile(filepath.Join(hold, "git"), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "wt", "r-kill")
			cmd := exec.Command("git", "worktree", "add", "-b", "gaffer/r-kill", dir, base)
			cmd.Dir = f.dir
			cmd.Env = append(os.Environ(), "GIT_EXEC_PATH="+hold)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(marker); err == nil {
					break
				}
				if time.Now().After(deadline) {
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					_ = cmd.Wait()
					t.Fatalf("git never ran its %s:\n%s", child, out.String())
				}
			}
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			leavesNothing(t, f, dir, "gaffer/r-kill", base)
		})
	}
}

// TestWorkTreesUnderAndCheckedOut: WorkTreesUnder names the directories
// in a folder and the work trees git records there whose directory is
// gone; CheckedOut names the work tree a branch is checked out in.
func TestWorkTreesUnderAndCheckedOut(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	base := f.commit("base")
	under := filepath.Join(t.TempDir(), "wt")
	if _, err := f.repo.AddWorkTree(f.ctx, filepath.Join(under, "r-1"), "gaffer/r-1", base); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repo.AddWorkTree(f.ctx, filepath.Join(under, "r-2"), "gaffer/r-2", base); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(under, "r-2")); err != nil { // git's record stays
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(under, "r-3"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := f.repo.WorkTreesUnder(under)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(under, "r-1"), filepath.Join(under, "r-2"), filepath.Join(under, "r-3")}
	if !equalStrings(got, want) {
		t.Fatalf("WorkTreesUnder = %v, want %v", got, want)
	}
	if wt, err := f.repo.CheckedOut(f.ctx, "gaffer/r-1"); err != nil || wt != filepath.Join(under, "r-1") {
		t.Fatalf("CheckedOut(gaffer/r-1) = %q, %v", wt, err)
	}
	if wt, err := f.repo.CheckedOut(f.ctx, "main"); err != nil || wt != f.dir {
		t.Fatalf("CheckedOut(main) = %q, %v; want the checkout %s", wt, err, f.dir)
	}
	f.git("branch", "other")
	if wt, err := f.repo.CheckedOut(f.ctx, "other"); err != nil || wt != "" {
		t.Fatalf("CheckedOut(other) = %q, %v; want none", wt, err)
	}
}
