package workspace

import (
	"context"
	"io"

	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
)

// Diff writes the unified diff from commit a to commit b to w, as
// `git diff A B` prints it (binary files named, not shown), leaving out
// the files under the paths in exclude (files, or directories for
// everything under them).
func (r *Repo) Diff(ctx context.Context, a, b string, exclude []string, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ca, err := r.resolve(a)
	if err != nil {
		return err
	}
	cb, err := r.resolve(b)
	if err != nil {
		return err
	}
	p, err := ca.PatchContext(ctx, cb)
	if err != nil {
		return &Error{Op: "diff", Path: a + ".." + b, Err: err}
	}
	excl := newPathSet(exclude)
	var keep []fdiff.FilePatch
	for _, fp := range p.FilePatches() {
		from, to := fp.Files()
		if (from == nil || !excl.has(from.Path())) && (to == nil || !excl.has(to.Path())) {
			keep = append(keep, fp)
		}
	}
	if err := fdiff.NewUnifiedEncoder(w, fdiff.DefaultContextLines).Encode(filePatches{p, keep}); err != nil {
		return &Error{Op: "diff", Path: a + ".." + b, Err: err}
	}
	return nil
}

// filePatches is a patch with some of its files left out.
type filePatches struct {
	fdiff.Patch
	files []fdiff.FilePatch
}

func (p filePatches) FilePatches() []fdiff.FilePatch { return p.files }
