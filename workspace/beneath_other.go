//go:build !unix

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteFileBeneath writes data to rel beneath root with WriteFileAtomic,
// after refusing a symbolic link at any element of rel (CheckBeneath);
// without openat a link made in between is not seen.
func WriteFileBeneath(root, rel string, data []byte, perm os.FileMode) error {
	if err := CheckBeneath(root, rel); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(root, filepath.FromSlash(rel)), data, perm)
}

// CheckBeneath returns a *LinkError when an element of rel (a slash path
// beneath root) that exists is a symbolic link.
func CheckBeneath(root, rel string) error {
	parts, err := splitBeneath(rel)
	if err != nil {
		return &Error{Op: "check", Path: rel, Err: err}
	}
	for i := range parts {
		p := filepath.Join(root, filepath.FromSlash(strings.Join(parts[:i+1], "/")))
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			t, _ := os.Readlink(p)
			return &LinkError{Root: root, Path: strings.Join(parts[:i+1], "/"), Target: t}
		}
	}
	return nil
}

// ReadFileBeneath reads rel beneath root, at most max bytes, after
// refusing a symbolic link at any element of rel (CheckBeneath) and a
// file that is not regular; without openat a link made in between is
// not seen.
func ReadFileBeneath(root, rel string, max int64) ([]byte, error) {
	if err := CheckBeneath(root, rel); err != nil {
		return nil, err
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{Op: "read", Path: full, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	if fi.Size() > max {
		return nil, &Error{Op: "read", Path: full, Err: fmt.Errorf("longer than %d bytes", max)}
	}
	return os.ReadFile(full)
}
