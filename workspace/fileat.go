package workspace

import (
	"context"
	"path"
	"slices"
)

// FileAt returns the content of file p (slash-separated, relative to the
// repository's root) in commit rev, and false when the commit has no such
// file. A submodule reads as git diffs it ("Subproject commit …").
func (r *Repo) FileAt(ctx context.Context, rev, p string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(rev)
	if err != nil {
		return nil, false, err
	}
	files, err := r.commitFiles(ctx, c)
	if err != nil {
		return nil, false, err
	}
	f, ok := files[path.Clean(p)]
	if !ok {
		return nil, false, nil
	}
	b, err := r.content(f, true)
	return b, err == nil, err
}

// FilesIn returns the names of the files directly in directory dir
// (slash-separated, relative to the repository's root) in commit rev,
// sorted; none when the commit has no such directory.
func (r *Repo) FilesIn(ctx context.Context, rev, dir string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.resolve(rev)
	if err != nil {
		return nil, err
	}
	files, err := r.commitFiles(ctx, c)
	if err != nil {
		return nil, err
	}
	dir = path.Clean(dir)
	var out []string
	for p := range files {
		if path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	slices.Sort(out)
	return out, nil
}
