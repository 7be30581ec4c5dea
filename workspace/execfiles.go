package workspace

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// WriteFileAtomic writes data to path so that a crash leaves either the old
// file or the new one, never a mix: it writes a temporary file in the same
// directory, syncs it, sets perm (exactly: no umask), renames it over path
// and syncs the directory. Missing parent directories are created. On
// error the temporary file is removed; one left by a killed process is
// never committed by Commit and is removed by ResetTo.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return &Error{Op: "write", Path: path, Err: err}
	}
	f, err := createTemp(path, 0o600)
	if err != nil {
		return &Error{Op: "write", Path: path, Err: err}
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return &Error{Op: "write", Path: path, Err: err}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return &Error{Op: "write", Path: path, Err: err}
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return &Error{Op: "write", Path: path, Err: err}
	}
	return syncDir(dir)
}

// createTemp creates ".NAME.gaffer-tmp-RANDOM" beside path with perm,
// which the umask narrows as for any new file.
func createTemp(path string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+tempMarker+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fs.ErrExist
}

// syncDir makes a rename in dir durable. File systems and platforms that
// cannot sync a directory are not an error.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return &Error{Op: "sync", Path: dir, Err: err}
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return &Error{Op: "sync", Path: dir, Err: err}
	}
	return nil
}
