package workspace

import (
	"os"
	"path/filepath"
	"strings"
)

// OpenWorkTree opens the work tree at dir, a linked work tree of r's
// repository (`git worktree add`, a run's own tree), with the git
// directory git made for it: the one in r's common directory
// (worktrees/NAME) whose gitdir file names dir's .git. It never reads the
// git directory from dir's .git file, which an agent working in dir can
// rewrite to name a repository of its own: gaffer would then commit and
// reset there, and check that repository's settings instead of its own
// (GitSettings reports such a .git as changed). A dir whose .git is a
// directory (a clone), or that no record of r's names, is opened as Open
// does.
func (r *Repo) OpenWorkTree(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	fi, err := os.Lstat(filepath.Join(abs, ".git"))
	if err != nil || fi.IsDir() {
		return Open(dir)
	}
	gitDir := r.linkedGitDir(abs)
	if gitDir == "" {
		return Open(dir)
	}
	fi, err = os.Stat(abs)
	if err != nil {
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	if !fi.IsDir() {
		return nil, &NotRepoError{Dir: abs}
	}
	repo, err := openGit(abs, gitDir, r.commonDir)
	if err != nil {
		return nil, &Error{Op: "open", Path: dir, Err: err}
	}
	return &Repo{root: abs, gitDir: gitDir, commonDir: r.commonDir, repo: repo, now: r.now}, nil
}

// GitDir returns the work tree's git directory, as Open or OpenWorkTree
// found it when the Repo was opened (HEAD, the index and a linked work
// tree's own files live there), not as the tree's .git says now.
func (r *Repo) GitDir() string { return r.gitDir }

// linkedGitDir returns the git directory, in r's common directory, of
// the linked work tree at dir (absolute): the worktrees/NAME whose gitdir
// file names dir's .git; "" when none does.
func (r *Repo) linkedGitDir(dir string) string {
	want := sameFile(filepath.Join(dir, ".git"))
	entries, err := os.ReadDir(filepath.Join(r.commonDir, "worktrees"))
	if err != nil {
		return ""
	}
	for _, e := range entries {
		admin := filepath.Join(r.commonDir, "worktrees", e.Name())
		b, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue
		}
		if sameFile(absFrom(admin, strings.TrimSpace(string(b)))) == want {
			return admin
		}
	}
	return ""
}

// sameFile returns p with the symbolic links of its directory resolved,
// so that two names of one file compare equal.
func sameFile(p string) string {
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(d, filepath.Base(p))
	}
	return filepath.Clean(p)
}
