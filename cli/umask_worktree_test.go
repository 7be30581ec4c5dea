package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWorkTreeIsPrivateUnderUmask000 starts a run in its own work tree
// with umask 000 and stops it at the plan's approval: git's record of the
// work tree (.git/worktrees/RUN), everything in it, and the work tree's
// directory give the group and others nothing (git made them 0777).
func TestWorkTreeIsPrivateUnderUmask000(t *testing.T) {
	dir, plan, script := demoRepo(t)
	old := syscall.Umask(0)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-umask")
	syscall.Umask(old)
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
	}
	record := filepath.Join(dir, ".git", "worktrees")
	entries, err := os.ReadDir(record)
	if err != nil || len(entries) != 1 {
		t.Fatalf("git's records of work trees: %v %v", entries, err)
	}
	gitdir := filepath.Join(record, entries[0].Name())
	wt, err := os.ReadFile(filepath.Join(gitdir, "gitdir"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(gitdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		checked++
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want nothing for the group and others", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Dir(string(wt[:len(wt)-1])) // gitdir holds WORKTREE/.git
	if fi, err := os.Stat(top); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("work tree %s: %v %v, want mode 0700", top, fi, err)
	}
	if checked < 3 {
		t.Fatalf("checked %d entries of %s", checked, gitdir)
	}
}
