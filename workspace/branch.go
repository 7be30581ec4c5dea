package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// CheckoutNewBranch creates the branch name (refs/heads/name) at commit
// and switches the work tree to it: HEAD points to the new branch, and
// the work tree and index become commit's, as ResetTo makes them — every
// other file that is not ignored is removed except the paths in keep,
// ignored files are never touched. The caller checks first that the
// tracked files have no changes it must keep. A name that is taken fails
// with ErrBranchExists; when the switch cannot be made (ResetTo's
// errors), HEAD is put back on the branch it was on.
func (r *Repo) CheckoutNewBranch(ctx context.Context, name, commit string, keep []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := plumbing.NewBranchReferenceName(name)
	if err := ref.Validate(); err != nil || name == "" {
		return &Error{Op: "branch", Path: name, Err: fmt.Errorf("invalid branch name: %w", err)}
	}
	if _, err := r.repo.Storer.Reference(ref); err == nil {
		return fmt.Errorf("%w: %s", ErrBranchExists, name)
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return &Error{Op: "read", Path: ref.String(), Err: err}
	}
	oldHead, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return &Error{Op: "read", Path: "HEAD", Err: err}
	}
	at, err := r.head()
	if err != nil {
		return err
	}
	// The new branch starts where HEAD is; the reset moves it (and the
	// work tree) to commit, with a reflog entry.
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(ref, at)); err != nil {
		return &Error{Op: "branch", Path: ref.String(), Err: err}
	}
	if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
		_ = r.repo.Storer.RemoveReference(ref)
		return &Error{Op: "checkout", Path: ref.String(), Err: err}
	}
	if _, err := retry(r, func() (struct{}, error) { return struct{}{}, r.resetTo(ctx, commit, keep) }); err != nil {
		_ = r.repo.Storer.SetReference(oldHead)
		_ = r.repo.Storer.RemoveReference(ref)
		return err
	}
	return nil
}

// HasBranch reports whether the branch name (refs/heads/name) exists and
// names a commit.
func (r *Repo) HasBranch(ctx context.Context, name string) bool {
	_, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+name+"^{commit}")
	return err == nil
}
