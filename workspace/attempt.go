package workspace

import (
	"context"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// AttemptRefPrefix is where a run keeps its failed attempts:
// AttemptRefPrefix + RUN/pN-aM (seed 002's retry context: "use git diff
// to see what changed in the failed attempt"). The run's deletion removes
// them.
const AttemptRefPrefix = "refs/gaffer/attempts/"

// KeepAttempt records the work tree as it is — every tracked file as on
// disk and every untracked file that is not ignored, except the paths in
// exclude — as one commit whose only parent is HEAD, under the ref
// AttemptRefPrefix+name, without touching HEAD, the index or the work
// tree: `git show REF` is the attempt's diff. It returns the commit's
// hash, or "" (and no ref) when the work tree does not differ from HEAD.
// The commit is dated when (zero: one second after HEAD), so the same
// attempt kept twice (a step run again after a crash) makes the same
// commit and the same ref.
func (r *Repo) KeepAttempt(ctx context.Context, name, message string, exclude []string, when time.Time) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() (string, error) { return r.keepAttempt(ctx, AttemptRefPrefix+name, message, exclude, when) })
}

func (r *Repo) keepAttempt(ctx context.Context, ref, message string, exclude []string, when time.Time) (string, error) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		return "", err
	}
	if snap.headHash.IsZero() {
		return "", ErrNoCommits
	}
	work, err := r.stage(ctx, snap, newPathSet(exclude))
	if err != nil {
		return "", err
	}
	tree, err := r.writeTree(work, nil, nil)
	if err != nil {
		return "", err
	}
	if tree == snap.headTree {
		return "", nil
	}
	osig, err := r.signatureOn(snap.headHash, when)
	if err != nil {
		return "", err
	}
	c := &object.Commit{Author: osig, Committer: osig, Message: message, TreeHash: tree, ParentHashes: []plumbing.Hash{snap.headHash}}
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", &Error{Op: "keep attempt", Path: r.root, Err: err}
	}
	h, err := r.store(obj)
	if err != nil {
		return "", err
	}
	if err := r.setRef(ref, h); err != nil {
		return "", err
	}
	return h.String(), nil
}

// signatureOn is the author and committer of a commit r makes on HEAD
// commit head: r's author, dated when, or when that is zero one second
// after HEAD, so that the same changes make the same commits.
func (r *Repo) signatureOn(head plumbing.Hash, when time.Time) (object.Signature, error) {
	c, err := r.commitObject("HEAD", head)
	if err != nil {
		return object.Signature{}, err
	}
	if when.IsZero() {
		when = c.Committer.When.Add(time.Second)
	}
	sig := r.author()
	return object.Signature{Name: sanitizeIdent(sig.Name), Email: sanitizeIdent(sig.Email), When: when}, nil
}
