package tmpdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

// ownerFile is the file, inside each directory, whose lock the owner holds.
const ownerFile = ".owner"

// name matches what Make names a directory: kind, pid, start time.
var name = regexp.MustCompile(`^gaffer-([a-z]+)-p([0-9]+)-s([0-9]+)-[0-9]+$`)

// Dir is a temporary directory that Make made; Remove removes it.
type Dir struct {
	// Path is the directory's absolute path.
	Path string
	lock *os.File
}

// Make creates a new directory, mode 0700, in os.TempDir(), named for
// kind (a lower-case word) and this process, and locks it as this
// process's until Remove.
func Make(kind string) (*Dir, error) {
	self := os.Getpid()
	start, err := startTime(self)
	if err != nil {
		start = 0
	}
	path, err := os.MkdirTemp("", fmt.Sprintf("gaffer-%s-p%d-s%d-*", kind, self, start))
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(path, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = lockFile(lock, true)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		_ = RemoveTree(path)
		return nil, fmt.Errorf("temporary directory: lock %s: %w", path, err)
	}
	return &Dir{Path: path, lock: lock}, nil
}

// Remove removes the directory and everything beneath it (see
// RemoveTree), then lets its lock go. It may be called more than once.
func (d *Dir) Remove() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := RemoveTree(d.Path)
	d.lock.Close()
	d.lock = nil
	return err
}

// Sweep removes from dir (os.TempDir() when "") the directories Make
// made whose owner process is gone, as the package says, and returns
// their paths, sorted. A directory it cannot remove is named in the error
// and the others are still removed.
func Sweep(dir string) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		m := name.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue // a symbolic link reports no directory
		}
		pid, err1 := strconv.Atoi(m[2])
		start, err2 := strconv.ParseUint(m[3], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !mine(path) || alive(pid, start) {
			continue
		}
		unlock, ok := takeOver(path)
		if !ok {
			continue
		}
		err := RemoveTree(path)
		unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, path)
	}
	slices.Sort(removed)
	return removed, errors.Join(errs...)
}

// takeOver locks path's owner file, when there is one, for the sweep: it
// fails when another process holds it. A directory killed before its
// owner file was made has none; its owner's pid was checked.
func takeOver(path string) (unlock func(), ok bool) {
	f, err := os.Open(filepath.Join(path, ownerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, true
	}
	if err != nil {
		return nil, false
	}
	if err := lockFile(f, false); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// RemoveTree removes dir and everything beneath it, as os.RemoveAll
// does, and also what a process left in directories it made read-only
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
