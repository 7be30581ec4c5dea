package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// TempMarker is in the name of every temporary file CreateTemp makes:
// "." + NAME + TempMarker + random.
const TempMarker = ".gaffer-tmp-"

// CreateTemp creates, exclusively, a new temporary file beside path, named
// "." + base(path) + TempMarker + random, with perm (which the umask
// narrows as for any new file).
func CreateTemp(path string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+TempMarker+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("atomicfile: create a temporary file for %s: %w", path, fs.ErrExist)
}

// IsTemp reports whether the file name (a base name, or a path whose last
// element is taken) is one CreateTemp makes.
func IsTemp(name string) bool {
	_, ok := TempTarget(name)
	return ok
}

// TempTarget returns the base name of the file the temporary file name
// (as IsTemp takes it) was to replace, and whether name is a temporary
// file's at all.
func TempTarget(name string) (string, bool) {
	base := filepath.Base(name)
	if !strings.HasPrefix(base, ".") {
		return "", false
	}
	i := strings.LastIndex(base, TempMarker)
	if i < 0 {
		return "", false
	}
	return base[1:max(i, 1)], true
}

// WriteFile replaces path with data, crash-safely: see the package doc.
// The file ends with mode perm exactly (no umask). path's directory must
// exist. On error the temporary file is removed; the error is an
// *fs.PathError whose Path is path, or path's directory when syncing the
// directory failed (after the rename: the new content is in place).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, (*os.File).Sync, SyncDir)
}

// write is WriteFile with its two syncs as parameters, so that a test can
// watch when they happen.
func write(path string, data []byte, perm os.FileMode, syncFile func(*os.File) error, syncDir func(string) error) error {
	f, err := CreateTemp(path, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: path, Err: err}
	}
	tmp := f.Name()
	fail := func(op string, err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail("chmod", err)
	}
	if err := syncFile(f); err != nil {
		return fail("sync", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return &fs.PathError{Op: "close", Path: path, Err: err}
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return &fs.PathError{Op: "rename", Path: path, Err: err}
	}
	return syncDir(filepath.Dir(path))
}

// SyncDir makes the renames and removals in dir durable. File systems and
// platforms that cannot sync a directory are not an error; others are an
// *fs.PathError.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

// RemoveTemps removes the temporary files that writers of path killed
// before their rename left beside it, and reports how many it removed.
// Call it only while no other process writes path.
func RemoveTemps(path string) (int, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("atomicfile: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if target, ok := TempTarget(e.Name()); !ok || target != base || e.IsDir() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("atomicfile: %w", err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
