package workspace

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// ErrLink is matched by every *LinkError.
var ErrLink = errors.New("workspace: a symbolic link where gaffer writes")

// LinkError is a write into a work tree refused because an element of its
// path beneath the tree is a symbolic link: gaffer writes nothing through
// a link, since an agent that planted one (phase-1 pointing elsewhere, or
// the execution directory replaced by a link) would have gaffer write
// where it points — over a file of the user's, or into .git. Nothing was
// written.
type LinkError struct {
	Root   string // the work tree
	Path   string // slash path, relative to Root: the link
	Target string // what the link points to
}

func (e *LinkError) Error() string {
	full := filepath.Join(e.Root, filepath.FromSlash(e.Path))
	return fmt.Sprintf("%s is a symbolic link to %s, planted in the work tree (by an agent?): gaffer writes nothing "+
		"through a link, which could lead outside the work tree or into .git; remove it (rm %s) and resume the run", e.Path, e.Target, full)
}

// Is makes errors.Is(err, ErrLink) true.
func (e *LinkError) Is(target error) bool { return target == ErrLink }

// splitBeneath checks rel, a slash path relative to a root, and returns
// its elements: empty elements, ".", ".." and absolute paths are refused.
func splitBeneath(rel string) ([]string, error) {
	if rel == "" || path.IsAbs(rel) || strings.Contains(rel, "\\") {
		return nil, fmt.Errorf("%w: %q is not a plain relative path", ErrUnsafePath, rel)
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("%w: %q is not a plain relative path", ErrUnsafePath, rel)
		}
	}
	return parts, nil
}
