package nodes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gaffer-dev/gaffer/workspace"
)

// A commit or reset takes git's lock files (index.lock, the branch's
// .lock) for a moment; a process killed in that moment leaves them, and
// git — and workspace — then refuse to work until someone removes them.
// Around each of its git writes this package keeps a marker file in the
// git directory naming its pid; RecoverGitLocks, run before a run is
// resumed, removes the lock files a dead gaffer process left, and only
// those: locks older than its marker or of a live process stay.

// opMarker is the marker's name in the git directory.
const opMarker = "gaffer-git-op"

// gitDirOf returns the git directory of the work tree root.
func gitDirOf(root string) string {
	dot := filepath.Join(root, ".git")
	b, err := os.ReadFile(dot)
	if err != nil {
		return dot
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return dot
	}
	if dir = strings.TrimSpace(dir); !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return dir
}

// gitOp runs fn with the marker in place.
func (w *workflow) gitOp(repo *workspace.Repo, fn func() error) error {
	marker := filepath.Join(repo.GitDir(), opMarker) // never where a rewritten .git points
	if err := workspace.WriteFileAtomic(marker, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return fmt.Errorf("nodes: git op marker: %w", err)
	}
	err := fn()
	if rerr := os.Remove(marker); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = fmt.Errorf("nodes: git op marker: %w", rerr)
	}
	return err
}

// RecoverGitLocks removes the git lock files that a gaffer process killed
// during a commit or reset left in the repository at root: when the
// marker names a process that no longer runs, every index.lock and ref
// .lock file made since the marker is removed, then the marker. It returns
// the paths removed. For a linked work tree (a run's own, whose git
// directory is .git/worktrees/<name>) that is its index.lock and HEAD.lock
// and the lock of the branch it has checked out, in the shared refs: the
// other work trees' locks are theirs.
func RecoverGitLocks(root string) ([]string, error) {
	gd := gitDirOf(root)
	marker := filepath.Join(gd, opMarker)
	b, err := os.ReadFile(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nodes: read %s: %w", marker, err)
	}
	fi, err := os.Stat(marker)
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err == nil && pid != os.Getpid() && alive(pid) {
		return nil, nil // a gaffer process is committing right now
	}
	since := fi.ModTime().Add(-time.Second)
	var removed []string
	err = filepath.WalkDir(gd, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(gd, p)
		if d.IsDir() {
			if rel == "objects" || rel == "gaffer" || strings.HasPrefix(rel, "gaffer") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".lock") || !(rel == "index.lock" || rel == "HEAD.lock" || strings.HasPrefix(rel, "refs"+string(filepath.Separator))) {
			return nil
		}
		if info, err := d.Info(); err == nil && !info.ModTime().Before(since) {
			if os.Remove(p) == nil {
				removed = append(removed, p)
			}
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("nodes: recover git locks: %w", err)
	}
	if p := branchLock(gd); p != "" {
		if info, err := os.Stat(p); err == nil && !info.ModTime().Before(since) && os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return removed, fmt.Errorf("nodes: %w", err)
	}
	return removed, nil
}

// branchLock is the lock file of the branch a linked work tree's git
// directory gd has checked out, in the shared refs; "" for a main work
// tree (its walk covers its refs) or a detached HEAD.
func branchLock(gd string) string {
	common, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return ""
	}
	head, err := os.ReadFile(filepath.Join(gd, "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/") {
		return ""
	}
	dir := strings.TrimSpace(string(common))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gd, dir)
	}
	return filepath.Join(dir, filepath.FromSlash(ref)) + ".lock"
}

// alive reports whether a process with pid runs on this host.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
