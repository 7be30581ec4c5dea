package workspace

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Fingerprint returns the git blob hash of each of paths (slash
// separated, relative to the root) as the work tree has it now: a file's
// content, a symbolic link's target, "" for a path that does not exist.
// Directories and nested repositories ("dir/") are left out. With store,
// every blob is also written to the object store, so that the version
// fingerprinted can be got back (`git cat-file -p HASH`) after the file
// changed.
func (r *Repo) Fingerprint(ctx context.Context, paths []string, store bool) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, p := range paths {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if strings.HasSuffix(p, "/") {
			continue
		}
		full := filepath.Join(r.root, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if isNotExist(err) {
			out[p] = ""
			continue
		}
		if err != nil {
			return nil, &Error{Op: "fingerprint", Path: p, Err: err}
		}
		var data []byte
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(full)
			if err != nil {
				return nil, &Error{Op: "fingerprint", Path: p, Err: err}
			}
			data = []byte(filepath.ToSlash(t))
		case fi.Mode().IsRegular():
			if data, err = os.ReadFile(full); err != nil {
				return nil, &Error{Op: "fingerprint", Path: p, Err: err}
			}
		default:
			continue
		}
		h := plumbing.ComputeHash(plumbing.BlobObject, data)
		if store {
			if h, err = r.storeBlob(data); err != nil {
				return nil, err
			}
		}
		out[p] = h.String()
	}
	return out, nil
}
