package proc

import (
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveTree removes dir and everything beneath it, as os.RemoveAll
// does, and also what a session left in directories it made read-only
// (Go's module cache makes its directories 0555): such directories are
// given their owner's write right back first. Symbolic links are removed,
// never followed.
func RemoveTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o700 != 0o700 {
				_ = os.Chmod(p, fi.Mode().Perm()|0o700)
			}
		}
		return nil
	})
	return os.RemoveAll(dir)
}

func removeTree(dir string) { _ = RemoveTree(dir) }
