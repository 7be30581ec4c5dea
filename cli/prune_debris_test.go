package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/runview"
)

// TestPruneRemovesWhatKilledStartsLeft: `gaffer run` is killed with
// SIGKILL at moments through its start (its work tree being made, its
// first checkpoint), as a user's kill -9 would; beside that, three
// starts are left as git leaves a `git worktree add` cut short: a branch
// alone, a tree without its .git file under a record locked
// "initializing" (the suite's own 45 ms failure), a locked record with no
// gitdir; and a run waits for approval in its own tree. `gaffer prune
// --yes` removes, and names, every branch and work
// tree no run of the store owns; what runs own stays: every branch left
// is a run's, every work tree git lists is a run's, and each run not
// finished still has its tree.
func TestPruneRemovesWhatKilledStartsLeft(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	trees := filepath.Join(dir, ".git", "gaffer.worktrees")
	// A run the store owns, waiting for approval in its own work tree.
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-owned"); code != ExitAwaitingApproval {
		t.Fatalf("run r-owned: exit %d\n%s", code, out)
	}
	for i, delay := range []time.Duration{0, 2, 5, 10, 20, 30, 45, 70, 100, 150, 250, 400} {
		id := fmt.Sprintf("r-k%02d", i)
		run := exec.Command(bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id, "--pace", "50ms")
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(dir, ".git", "gaffer.sock")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Lstat(sock); err == nil {
				break
			}
		}
		time.Sleep(delay * time.Millisecond)
		_ = run.Process.Kill()
		_ = run.Wait()
	}
	head := gitOut(t, dir, "rev-parse", "HEAD")
	// A branch alone: killed after the add's `git branch`.
	gitOut(t, dir, "branch", "gaffer/r-debris1", head)
	// A tree git listed, killed before it wrote the tree's .git file.
	gitOut(t, dir, "worktree", "add", "-q", "-b", "gaffer/r-debris2", filepath.Join(trees, "r-debris2"), head)
	if err := os.Remove(filepath.Join(trees, "r-debris2", ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "worktrees", "r-debris2", "locked"), []byte("initializing"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A record git made and locked, killed before it wrote its gitdir.
	gitOut(t, dir, "branch", "gaffer/r-debris3", head)
	if err := os.MkdirAll(filepath.Join(dir, ".git", "worktrees", "r-debris3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "worktrees", "r-debris3", "locked"), []byte("initializing"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, code := gafferCmd(t, bin, "--repo", dir, "prune", "--yes")
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"Removed work tree " + filepath.Join(trees, "r-debris2") + ": no run owns it (a start cut short).",
		"Deleted branch gaffer/r-debris1: no run owns it, and its commits are merged.",
		"Deleted branch gaffer/r-debris2: no run owns it, and its commits are merged.",
		"Deleted branch gaffer/r-debris3: no run owns it, and its commits are merged.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("prune does not say %q:\n%s", want, out)
		}
	}
	runs := map[string]runview.Run{}
	lout, code := gafferCmd(t, bin, "--repo", dir, "list", "--json")
	var rows []runview.Run
	if code != 0 || json.Unmarshal([]byte(lout), &rows) != nil {
		t.Fatalf("list: exit %d\n%s", code, lout)
	}
	for _, r := range rows {
		runs[r.RunID] = r
	}
	for _, b := range strings.Fields(gitOut(t, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/gaffer/")) {
		if _, ok := runs[strings.TrimPrefix(b, "gaffer/")]; !ok {
			t.Errorf("branch %s of no run stays after prune:\n%s", b, out)
		}
	}
	// A work tree's run: .git/gaffer.worktrees/RUN, or a lane's
	// .git/gaffer-lanes/RUN/pN-lK (a killed run's lanes stay for its resume).
	lanes := filepath.Join(dir, ".git", "gaffer-lanes")
	owner := func(p string) string {
		if rel, err := filepath.Rel(lanes, p); err == nil && !strings.HasPrefix(rel, "..") {
			return strings.Split(filepath.ToSlash(rel), "/")[0]
		}
		return filepath.Base(p)
	}
	for _, f := range strings.Split(gitOut(t, dir, "worktree", "list", "--porcelain"), "\n") {
		p, ok := strings.CutPrefix(f, "worktree ")
		if !ok || p == dir {
			continue
		}
		if _, ok := runs[owner(p)]; !ok {
			t.Errorf("work tree %s of no run stays after prune", p)
		}
	}
	recs, _ := os.ReadDir(filepath.Join(dir, ".git", "worktrees"))
	for _, r := range recs {
		gitdir, err := os.ReadFile(filepath.Join(dir, ".git", "worktrees", r.Name(), "gitdir"))
		if err != nil { // git names a record after its tree, made unique (p1-l12)
			t.Errorf("git's record %s has no gitdir after prune: %v", r.Name(), err)
			continue
		}
		if _, ok := runs[owner(filepath.Dir(strings.TrimSpace(string(gitdir))))]; !ok {
			t.Errorf("git's record %s (of %s) of no run stays after prune", r.Name(), strings.TrimSpace(string(gitdir)))
		}
	}
	entries, _ := os.ReadDir(trees)
	for _, e := range entries {
		if _, ok := runs[e.Name()]; !ok {
			t.Errorf("%s of no run stays in %s", e.Name(), trees)
		}
	}
	if r, ok := runs["r-owned"]; !ok || r.WorkTree == "" {
		t.Fatalf("run r-owned is not listed with its work tree: %+v", r)
	}
	for id, r := range runs {
		if r.WorkTree == "" || (r.Status != "running" && r.Status != "awaiting_approval") {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.WorkTree, ".git")); err != nil {
			t.Errorf("prune touched the work tree of run %s, which owns it: %v", id, err)
		}
		if gitOut(t, dir, "branch", "--list", "gaffer/"+id) == "" {
			t.Errorf("prune deleted the branch of run %s", id)
		}
	}
	t.Logf("%d of 12 killed starts have a run in the store; prune said:\n%s", len(runs)-1, out)
	if out, code := gafferCmd(t, bin, "--repo", dir, "prune", "--yes"); code != 0 || strings.Contains(out, "Removed") || strings.Contains(out, "Deleted branch") {
		t.Fatalf("a second prune: exit %d, want nothing left to remove\n%s", code, out)
	}
}
