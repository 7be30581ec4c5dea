package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RunTrees are the runs' own work trees. Each run works on its branch in
// a directory of its own under Dir: a linked work tree of Repo (`git
// worktree add`, the fast setup), or, with a Mirror, a clone of the shared
// remote that borrows the mirror's objects, so that the remote holds the
// branch and any host may make the tree again. A tree is made from a base
// commit with the untracked files Repo's IncludeFile names copied in (a
// run's inputs, a .env); it goes when its run ends, and its branch stays.
// Which runs have trees, and what becomes of them, is the caller's: a
// RunTrees only makes, checks and removes them.
type RunTrees struct {
	Repo   *Repo   // the user's repository
	Dir    string  // where the trees are, absolute
	Mirror *Mirror // the shared remote's mirror; nil for linked work trees
}

// NoCommitError is a tree refused for want of a commit to start from:
// the repository's HEAD, or the shared remote's (Remote set).
type NoCommitError struct {
	Remote string // the remote's URL; "" for the repository
	Err    error
}

func (e *NoCommitError) Error() string {
	if e.Remote != "" {
		return fmt.Sprintf("the remote %s has no commit to start from: %v", e.Remote, e.Err)
	}
	return fmt.Sprintf("the repository has no commit to start from: %v", e.Err)
}

// Unwrap returns the cause.
func (e *NoCommitError) Unwrap() error { return e.Err }

// Path is the tree of run id.
func (t RunTrees) Path(id string) string { return filepath.Join(t.Dir, id) }

// Make makes run id's tree on branch at base and returns it with the
// files it copied in (IncludeFile). A linked tree's base "" is Repo's
// HEAD. On a remote, a branch the remote does not have is pushed there
// first, at base (the remote's HEAD for ""); one it has is cloned as it
// is. Either lacking a commit is a *NoCommitError.
func (t RunTrees) Make(ctx context.Context, id, branch, base string) (dir string, inputs []string, err error) {
	dir = t.Path(id)
	if t.Mirror != nil {
		if err := t.pushNew(ctx, branch, base); err != nil {
			return "", nil, err
		}
		if err := t.Mirror.Clone(ctx, dir, branch); err != nil {
			return "", nil, fmt.Errorf("make its clone: %w", err)
		}
	} else {
		if base == "" {
			if base, err = t.Repo.Head(ctx); err != nil {
				return "", nil, &NoCommitError{Err: err}
			}
		}
		if _, err := t.Repo.AddWorkTree(ctx, dir, branch, base); err != nil {
			return "", nil, fmt.Errorf("make its work tree: %w", err)
		}
	}
	if inputs, err = t.Repo.Included(ctx); err != nil {
		return "", nil, err
	}
	if err := CopyFiles(t.Repo.Root(), dir, inputs); err != nil {
		return "", nil, fmt.Errorf("copy the files %s names: %w", IncludeFile, err)
	}
	return dir, inputs, nil
}

// pushNew pushes branch to the remote at base (its HEAD for "") when the
// remote has no such branch: compare-and-swap with none, so that a
// branch another host pushed meanwhile stays.
func (t RunTrees) pushNew(ctx context.Context, branch, base string) error {
	m := t.Mirror
	if err := m.Sync(ctx); err != nil {
		return err
	}
	if m.Tip(ctx, branch) != "" {
		return nil
	}
	if base == "" {
		var err error
		if base, err = Git(ctx, m.Path, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
			return &NoCommitError{Remote: m.URL, Err: err}
		}
	}
	if _, err := Git(ctx, m.Path, "push", "--quiet", "--force-with-lease=refs/heads/"+branch+":", m.URL, base+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("push its branch: %w", err)
	}
	return m.Sync(ctx)
}

// Restore makes the linked tree at dir again on branch when it is gone
// (removed by hand), and reports whether it did; a tree that is there is
// left as it is.
func (t RunTrees) Restore(ctx context.Context, dir, branch string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if _, err := t.Repo.AddWorkTree(ctx, dir, branch, ""); err != nil {
		return false, fmt.Errorf("make its work tree again: %w", err)
	}
	return true, nil
}

// Usable reports whether run id's clone is on branch at tip, as a clone
// this host can go on in is; err says why a clone that is there could not
// be read.
func (t RunTrees) Usable(ctx context.Context, id, branch, tip string) (bool, error) {
	wt, err := Open(t.Path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	head, herr := wt.Head(ctx)
	b, berr := wt.Branch(ctx)
	return herr == nil && berr == nil && head == tip && b == branch, nil
}

// Reclone makes run id's clone again on branch (a clone this host never
// had, or one at another commit), with the files inputs names copied in
// from Repo.
func (t RunTrees) Reclone(ctx context.Context, id, branch string, inputs []string) error {
	dir := t.Path(id)
	if err := t.Mirror.Clone(ctx, dir, branch); err != nil {
		return fmt.Errorf("make its clone again: %w", err)
	}
	if err := CopyFiles(t.Repo.Root(), dir, inputs); err != nil {
		return fmt.Errorf("copy the files %s names: %w", IncludeFile, err)
	}
	return nil
}

// Remove removes the tree at dir, keeping its branch (on the remote, for
// a clone).
func (t RunTrees) Remove(ctx context.Context, dir string) error {
	if t.Mirror != nil {
		return os.RemoveAll(dir)
	}
	return t.Repo.RemoveWorkTree(context.WithoutCancel(ctx), dir)
}

// Discard removes run id's tree and, for a linked tree, its branch: the
// tree of a run that never had a checkpoint, which has nothing to keep.
func (t RunTrees) Discard(ctx context.Context, id, branch string) error {
	if t.Mirror != nil {
		if err := os.RemoveAll(t.Path(id)); err != nil {
			return fmt.Errorf("remove its clone: %w", err)
		}
		return nil
	}
	if err := t.Repo.RemoveWorkTree(ctx, t.Path(id)); err != nil {
		return fmt.Errorf("remove its work tree: %w", err)
	}
	if err := t.Repo.DeleteBranch(ctx, branch); err != nil {
		return fmt.Errorf("delete its branch: %w", err)
	}
	return nil
}

// Runs lists the runs that have a tree under Dir.
func (t RunTrees) Runs() []string {
	entries, err := os.ReadDir(t.Dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, en := range entries {
		if en.IsDir() {
			ids = append(ids, en.Name())
		}
	}
	return ids
}

// BranchMovedError is a push refused because the branch is not where
// the pusher left it: someone else's history is on it.
type BranchMovedError struct {
	Branch   string
	Tip      string // where the branch is on the remote
	Expected string // where the pusher left it
}

func (e *BranchMovedError) Error() string {
	return fmt.Sprintf("branch %s is at %s on the remote, not at %s", e.Branch, e.Tip, e.Expected)
}

// PushLease pushes commit from the clone at dir to branch on its origin
// if the branch is at old there: a compare-and-swap. A branch already at
// commit, or past it at the clone's own HEAD (both pushed before a
// crash), is success; a branch elsewhere is a *BranchMovedError; an
// origin that cannot be reached is the push's error (a later attempt
// pushes).
func PushLease(ctx context.Context, dir, branch, commit, old string) error {
	ref := "refs/heads/" + branch
	_, err := Git(ctx, dir, "push", "--quiet", "--force-with-lease="+ref+":"+old, "origin", commit+":"+ref)
	if err == nil {
		return nil
	}
	out, lerr := Git(ctx, dir, "ls-remote", "origin", ref)
	if lerr != nil {
		return err
	}
	tip, _, _ := strings.Cut(out, "\t")
	if tip == commit {
		return nil
	}
	if head, herr := Git(ctx, dir, "rev-parse", "HEAD"); herr == nil && head == tip {
		if _, aerr := Git(ctx, dir, "merge-base", "--is-ancestor", commit, tip); aerr == nil {
			return nil
		}
	}
	if tip != old {
		return &BranchMovedError{Branch: branch, Tip: tip, Expected: old}
	}
	return err
}

// CommitTrailer is a commit and the value of one of its trailers.
type CommitTrailer struct{ Hash, Value string }

// FirstParents lists the n newest commits of tip's first-parent history
// in the mirror, newest first, each with the value of its trailer key
// (values of several such trailers joined by commas).
func (m *Mirror) FirstParents(ctx context.Context, tip string, n int, key string) ([]CommitTrailer, error) {
	out, err := Git(ctx, m.Path, "log", "--first-parent", fmt.Sprintf("-%d", n),
		"--format=%H %(trailers:key="+key+",valueonly,separator=%x2C)", tip)
	if err != nil {
		return nil, err
	}
	var cs []CommitTrailer
	for _, line := range strings.Split(out, "\n") {
		hash, value, _ := strings.Cut(line, " ")
		cs = append(cs, CommitTrailer{Hash: hash, Value: strings.TrimSpace(value)})
	}
	return cs, nil
}
