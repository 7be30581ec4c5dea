package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

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
	if err := r.removeWorkTree(ctx, dir); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, &Error{Op: "add work tree", Path: dir, Err: err}
	}
	if err := r.clearBranchLock(branch); err != nil {
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

// clearBranchLock removes the lock file of branch name (refs/heads/NAME.lock)
// that a git killed while it moved the branch left: `git worktree add`
// cut short in its `git branch` or its `git reset --hard`. git then
// refuses to move or delete the branch until someone removes the file.
// Its callers hold the store the run's branch belongs to and the work
// trees' lock, so no gaffer process is moving the branch; a run's branch
// is no one else's to move.
func (r *Repo) clearBranchLock(name string) error {
	ref := plumbing.NewBranchReferenceName(name)
	if err := ref.Validate(); err != nil || name == "" {
		return fmt.Errorf("invalid branch name %q: %w", name, err)
	}
	err := os.Remove(filepath.Join(r.commonDir, filepath.FromSlash(ref.String())+".lock"))
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return err
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

// RemoveWorkTree removes the linked work tree at dir and git's record of
// it, keeping its branch, whatever state a `git worktree add` cut short
// (a run killed or cancelled as its tree was made) left them in: a
// record alone, still locked "initializing", with or without its gitdir
// file; a directory git does not list; a directory without its .git
// file, or without a checkout; or a whole work tree. A dir already gone
// is no error. dir must be a directory gaffer owns: all of it goes.
func (r *Repo) RemoveWorkTree(ctx context.Context, dir string) error {
	unlock, err := r.lockWorkTrees(ctx)
	if err != nil {
		return &Error{Op: "remove work tree", Path: dir, Err: err}
	}
	defer unlock()
	if err := r.removeWorkTree(ctx, dir); err != nil {
		return &Error{Op: "remove work tree", Path: dir, Err: err}
	}
	return nil
}

// removeWorkTree is RemoveWorkTree with the work trees' lock held. It
// does what `git worktree remove` does without asking git, which
// refuses every state but the whole one ("is not a .git file", "not a
// working tree", a lock): the directory goes, then each of git's records
// of it, then the records git itself counts as stale (`git worktree
// prune`). A kill between the steps leaves a state this handles.
func (r *Repo) removeWorkTree(ctx context.Context, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := removeAll(abs); err != nil {
		return err
	}
	records, err := r.workTreeRecords(abs)
	if err != nil {
		return err
	}
	for _, rec := range records {
		if err := removeAll(rec); err != nil {
			return err
		}
	}
	if _, err := gitCLI(ctx, r.root, "worktree", "prune"); err != nil {
		return err
	}
	return nil
}

// workTreeRecords returns the directories under the repository's
// worktrees/ that record the work tree at abs: each whose gitdir file
// names abs's .git (abs as given, or with its parent's links resolved, as
// git writes it), and each that has no gitdir file yet (an add cut short
// before it wrote one) and is named as git names abs's record, its base
// name with or without a number after it.
func (r *Repo) workTreeRecords(abs string) ([]string, error) {
	root := filepath.Join(r.commonDir, "worktrees")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	want := gitFileNames(abs)
	base := filepath.Base(abs)
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rec := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(rec, "gitdir"))
		switch {
		case err == nil && len(bytes.TrimSpace(b)) > 0:
			if want[filepath.Clean(string(bytes.TrimSpace(b)))] {
				out = append(out, rec)
			}
		case recordNamed(e.Name(), base):
			out = append(out, rec)
		}
	}
	return out, nil
}

// gitFileNames returns the names a record's gitdir file may give the .git
// file of the work tree at abs: abs's own, and the one with its parent's
// links resolved, as git writes it.
func gitFileNames(abs string) map[string]bool {
	want := map[string]bool{filepath.Join(abs, ".git"): true}
	if parent, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		want[filepath.Join(parent, filepath.Base(abs), ".git")] = true
	}
	return want
}

// recordNamed reports whether name is one git gives the record of a work
// tree whose base name is base: base, or base and a number (git counts up
// while the name is taken).
func recordNamed(name, base string) bool {
	rest, ok := strings.CutPrefix(name, base)
	if !ok {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeAll removes path and everything beneath it, giving back the
// owner's rights on the directories a session took them from (chmod 000
// on a directory of its work tree) so that they can be emptied.
func removeAll(path string) error {
	err := os.RemoveAll(path)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	writable(path)
	return os.RemoveAll(path)
}

// writable gives the owner every right on the directory at path and on
// each directory beneath it; symbolic links are not followed.
func writable(path string) {
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return
	}
	_ = os.Chmod(path, 0o700)
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if e.IsDir() {
			writable(filepath.Join(path, e.Name()))
		}
	}
}

// WorkTreesUnder returns the work trees of the repository that are, or
// were being made, directly in the directory under, as absolute paths:
// the directories there, and those git has a record of there (one whose
// directory is gone, or was never made). Sorted, each once.
func (r *Repo) WorkTreesUnder(under string) ([]string, error) {
	abs, err := filepath.Abs(under)
	if err != nil {
		return nil, err
	}
	parents := map[string]bool{abs: true}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		parents[real] = true
	}
	seen := map[string]bool{}
	entries, err := os.ReadDir(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			seen[filepath.Join(abs, e.Name())] = true
		}
	}
	root := filepath.Join(r.commonDir, "worktrees")
	records, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range records {
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		wt := filepath.Dir(filepath.Clean(string(bytes.TrimSpace(b))))
		if parents[filepath.Dir(wt)] {
			seen[filepath.Join(abs, filepath.Base(wt))] = true
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// WorkTreeLeft reports whether anything of a work tree at dir is there:
// its directory, or a record of git's of it (RemoveWorkTree's).
func (r *Repo) WorkTreeLeft(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	if _, err := os.Lstat(abs); err == nil {
		return true
	}
	recs, err := r.workTreeRecords(abs)
	return err == nil && len(recs) > 0
}

// CheckedOut returns the work tree (the user's checkout, or a linked one)
// that has branch checked out, "" when none has: git refuses to delete
// such a branch.
func (r *Repo) CheckedOut(ctx context.Context, branch string) (string, error) {
	out, err := gitCLI(ctx, r.root, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return "", &Error{Op: "list work trees", Path: r.root, Err: err}
	}
	var tree string
	for _, field := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(field, "worktree "); ok {
			tree = p
		}
		if field == "branch refs/heads/"+branch {
			return tree, nil
		}
	}
	return "", nil
}

// DeleteBranch deletes branch name (`git branch -D`); a branch that does
// not exist is no error. A lock file of the branch that a killed git left
// goes first (see clearBranchLock). A branch checked out in a work tree
// cannot be deleted: git refuses.
func (r *Repo) DeleteBranch(ctx context.Context, name string) error {
	if err := r.clearBranchLock(name); err != nil {
		return &Error{Op: "delete branch", Path: name, Err: err}
	}
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
