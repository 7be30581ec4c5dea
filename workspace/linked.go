package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/internal/gitcmd"
)

// IncludeFile is the per-repository list, at the root of the user's
// checkout, of the untracked files a run's own work tree needs (a .env,
// local settings): gitignore-style patterns, as Claude Code's
// .worktreeinclude.
const IncludeFile = ".worktreeinclude"

// gitCLI runs the git command in the work tree at dir and returns its
// standard output; a failure is a *gitcmd.Error carrying git's standard
// error. It is gitcmd.Run: every git command gaffer runs goes through
// gitcmd, with the repository's hooks, fsmonitor and other commands off;
// a work tree whose .git is a directory is named (gitcmd.At).
func gitCLI(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if repo, ok := gitcmd.At(dir); ok {
		return repo.Run(ctx, args...)
	}
	return gitcmd.Run(ctx, dir, args...)
}

// AddWorkTree makes dir a fresh linked work tree of r's repository (`git
// worktree add`; go-git has none) on a new branch at base, and opens it.
// A run killed half-way through its first step calls it again, so
// whatever that left goes first: the directory (whole, or half checked
// out), and git's record of it, even one git left locked while it was
// "initializing". A branch that exists already is checked out as it is
// (base then is not used). dir must be a directory gaffer owns: what is
// there is removed.
func (r *Repo) AddWorkTree(ctx context.Context, dir, branch, base string) (*Repo, error) {
	unlock, err := r.lockWorkTrees(ctx)
	if err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	defer unlock()
	if err := os.RemoveAll(dir); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	_, _ = gitCLI(ctx, r.root, "worktree", "unlock", dir) // not locked: git says so, nothing to do
	if _, err := gitCLI(ctx, r.root, "worktree", "prune"); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	args := []string{"worktree", "add", "-b", branch, dir, base}
	if _, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args = []string{"worktree", "add", dir, branch}
	}
	if _, err := gitCLI(ctx, r.root, args...); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	// Only a speed-up: the branch is there, packed or not.
	_, _ = r.PackLooseBranches(ctx, path.Dir(branch), LooseBranchesToPack)
	wt, err := Open(dir)
	if err != nil {
		return nil, err
	}
	// git makes the work tree and its record (.git/worktrees/NAME) with
	// the umask's modes, 0777 under umask 000: they are gaffer's, private.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	if err := private(wt.gitDir); err != nil {
		return nil, &Error{Op: "add work tree", Path: wt.gitDir, Err: err}
	}
	return wt, nil
}

// LooseBranchesToPack is how many loose branches under a run branches'
// folder AddWorkTree lets pile up before it packs them: a listing asks git
// about every run's branch, and git reads 10,000 loose refs in 85 ms,
// packed ones in 8.
const LooseBranchesToPack = 256

// PackLooseBranches packs the repository's refs (`git pack-refs --all`,
// what `git gc` does) when the folder refs/heads/<under> holds atLeast
// loose branches or more, and reports whether it did. Packed or loose, a
// ref is the same ref to git and go-git; the user's own branches and tags
// are packed too, as gc would pack them. A repository that keeps its refs
// otherwise (reftable) has no such folder and is left as it is.
func (r *Repo) PackLooseBranches(ctx context.Context, under string, atLeast int) (bool, error) {
	if under == "" || under == "." {
		return false, nil
	}
	d, err := os.Open(filepath.Join(r.commonDir, "refs", "heads", filepath.FromSlash(under)))
	if err != nil {
		return false, nil // no loose branches there
	}
	names, _ := d.Readdirnames(atLeast)
	d.Close()
	if len(names) < atLeast {
		return false, nil
	}
	if _, err := gitCLI(ctx, r.root, "pack-refs", "--all"); err != nil {
		return false, &Error{Op: "pack refs", Path: r.root, Err: err}
	}
	return true, nil
}

// private takes the group's and others' rights from dir and everything
// beneath it.
func private(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if m := fi.Mode().Perm(); m&0o077 != 0 {
			return os.Chmod(p, m&^0o077)
		}
		return nil
	})
}

// WorkTreesLockFile is the name, in the repository's (common) git
// directory, of the file AddWorkTree and RemoveWorkTree lock while they
// change git's records of linked work trees: one `git worktree prune`
// removes the record another `git worktree add` is making.
const WorkTreesLockFile = "gaffer-worktrees.lock"

// lockWorkTrees takes the repository's WorkTreesLockFile, waiting for
// another process or goroutine that holds it until ctx ends, and returns
// its release.
func (r *Repo) lockWorkTrees(ctx context.Context) (func(), error) {
	path := filepath.Join(r.commonDir, WorkTreesLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return func() { _ = unlock(f); _ = f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, context.Cause(ctx))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// RemoveWorkTree removes the linked work tree at dir (`git worktree
// remove --force`), keeping its branch; a dir already gone is pruned from
// git's records.
func (r *Repo) RemoveWorkTree(ctx context.Context, dir string) error {
	unlock, err := r.lockWorkTrees(ctx)
	if err != nil {
		return &Error{Op: "remove work tree", Path: dir, Err: err}
	}
	defer unlock()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		_, _ = gitCLI(ctx, r.root, "worktree", "prune")
		return nil
	}
	if _, err := gitCLI(ctx, r.root, "worktree", "remove", "--force", "--force", dir); err != nil {
		// A `git worktree add` cut short (a run cancelled as its tree was
		// made) leaves a directory git does not count as a work tree:
		// it goes as AddWorkTree clears what such an add left.
		if known, lerr := r.knownWorkTree(ctx, dir); lerr != nil || known {
			return &Error{Op: "remove work tree", Path: dir, Err: err}
		}
		if err := os.RemoveAll(dir); err != nil {
			return &Error{Op: "remove work tree", Path: dir, Err: err}
		}
		if _, err := gitCLI(ctx, r.root, "worktree", "prune"); err != nil {
			return &Error{Op: "remove work tree", Path: dir, Err: err}
		}
	}
	return nil
}

// knownWorkTree reports whether git lists dir as one of the repository's
// work trees.
func (r *Repo) knownWorkTree(ctx context.Context, dir string) (bool, error) {
	out, err := gitCLI(ctx, r.root, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return false, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	real, _ := filepath.EvalSymlinks(abs)
	for _, field := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(field, "worktree "); ok && (p == abs || p == real) {
			return true, nil
		}
	}
	return false, nil
}

// DeleteBranch deletes branch name (`git branch -D`); a branch that does
// not exist is no error.
func (r *Repo) DeleteBranch(ctx context.Context, name string) error {
	if _, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+name); err != nil {
		return nil
	}
	if _, err := gitCLI(ctx, r.root, "branch", "-D", name); err != nil {
		return &Error{Op: "delete branch", Path: name, Err: err}
	}
	return nil
}

// Included lists the files of r's work tree that its IncludeFile names
// and that are untracked or ignored, slash paths relative to the root;
// none without an IncludeFile.
func (r *Repo) Included(ctx context.Context) ([]string, error) {
	list := filepath.Join(r.root, IncludeFile)
	if _, err := os.Stat(list); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	out, err := gitCLI(ctx, r.root, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+list)
	if err != nil {
		return nil, &Error{Op: "read", Path: list, Err: err}
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && p != IncludeFile {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// CopyFiles copies the files at paths (slash, relative) from the work
// tree at from to the one at to, keeping their modes; a file missing in
// from is skipped, a symbolic link is copied as a link.
func CopyFiles(from, to string, paths []string) error {
	for _, p := range paths {
		src, dst := filepath.Join(from, filepath.FromSlash(p)), filepath.Join(to, filepath.FromSlash(p))
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return &Error{Op: "copy", Path: p, Err: err}
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return &Error{Op: "copy", Path: p, Err: err}
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err == nil {
				_ = os.Remove(dst)
				err = os.Symlink(target, dst)
			}
			if err != nil {
				return &Error{Op: "copy", Path: p, Err: err}
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if err := copyFile(src, dst, fi.Mode().Perm()); err != nil {
			return &Error{Op: "copy", Path: p, Err: err}
		}
	}
	return nil
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
