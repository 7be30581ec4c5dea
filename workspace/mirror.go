package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Mirror is a shared remote of runs and a host's mirror of it (`git clone
// --mirror`), from which each run's own clone borrows its objects (`git
// clone --reference`). It is safe for concurrent use.
type Mirror struct {
	URL  string // the remote: a URL, or an absolute path
	Path string // the host's mirror of it
	mu   sync.Mutex
	kept bool // the mirror is set to keep its objects (keepObjects)
}

// NewMirror is the remote at url mirrored at path.
func NewMirror(url, path string) *Mirror { return &Mirror{URL: url, Path: path} }

// Git runs the git command in dir and returns its standard output,
// trimmed; a failure carries git's standard error (gitCLI).
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := gitCLI(ctx, dir, args...)
	return strings.TrimSpace(string(out)), err
}

// Sync brings the mirror up to date with the remote, making it the first
// time (in a temporary directory renamed into place, so a crash leaves no
// half mirror).
func (m *Mirror) Sync(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := os.Stat(filepath.Join(m.Path, "HEAD")); err == nil {
		if !m.kept {
			// A mirror made before it kept its objects.
			if err := keepObjects(ctx, m.Path); err != nil {
				return err
			}
			m.kept = true
		}
		if _, err := Git(ctx, m.Path, "fetch", "--quiet", "--prune", m.URL, "+refs/*:refs/*"); err != nil {
			return fmt.Errorf("fetch the remote %s into the mirror: %w", m.URL, err)
		}
		return nil
	}
	tmp := m.Path + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(m.Path), 0o700); err != nil {
		return err
	}
	if _, err := Git(ctx, filepath.Dir(m.Path), "clone", "--quiet", "--mirror", m.URL, tmp); err != nil {
		return fmt.Errorf("mirror the remote %s: %w", m.URL, err)
	}
	if err := keepObjects(ctx, tmp); err != nil {
		return err
	}
	m.kept = true
	return os.Rename(tmp, m.Path)
}

// keepObjects makes git never delete an object of the mirror: the runs'
// clones borrow its objects (clone --reference, an alternate), and a
// pruning gc there — git fetch runs `git gc --auto` — would take from a
// clone an object no ref of the mirror reaches any more (a run's branch
// deleted or rewritten on the remote while its clone is in use), leaving
// the clone corrupt. gc still packs; refs of deleted branches still go
// (fetch --prune). The cost is that the objects of deleted branches stay:
// a mirror, with no clone of this host's runs in use (no serve), may be
// removed; the next run makes it again.
func keepObjects(ctx context.Context, mirror string) error {
	if _, err := Git(ctx, mirror, "config", "gc.pruneExpire", "never"); err != nil {
		return fmt.Errorf("the mirror %s: %w", mirror, err)
	}
	return nil
}

// Tip is where branch is in the mirror, "" when it has no such branch.
func (m *Mirror) Tip(ctx context.Context, branch string) string {
	h, err := Git(ctx, m.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil {
		return ""
	}
	return h
}

// Clone makes dir a clone of the remote on branch, borrowing the
// mirror's objects; what was at dir goes.
func (m *Mirror) Clone(ctx context.Context, dir, branch string) error {
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if _, err := Git(ctx, filepath.Dir(dir), "clone", "--quiet", "--reference", m.Path, "--branch", branch, m.URL, dir); err != nil {
		return fmt.Errorf("clone the remote %s: %w", m.URL, err)
	}
	return nil
}
