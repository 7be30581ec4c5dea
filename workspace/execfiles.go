package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// WriteFileAtomic writes data to path so that a crash leaves either the old
// file or the new one, never a mix, with atomicfile.WriteFile: it writes a
// temporary file in the same directory, syncs it, sets perm (exactly: no
// umask), renames it over path and syncs the directory. Missing parent directories are created. On
// error the temporary file is removed; one left by a killed process is
// never committed by Commit and is removed by ResetTo.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return &Error{Op: "write", Path: path, Err: err}
	}
	return fileError(path, atomicfile.WriteFile(path, data, perm))
}

// fileError turns an error of atomicfile into the package's: a failed sync
// of the directory is a "sync" of that directory, anything else a "write"
// of path.
func fileError(path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return &Error{Op: "write", Path: path, Err: err}
	}
	if pe.Path != path {
		return &Error{Op: "sync", Path: pe.Path, Err: pe.Err}
	}
	return &Error{Op: "write", Path: path, Err: pe.Err}
}

// syncDir makes a rename in dir durable (see atomicfile.SyncDir).
func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &Error{Op: "sync", Path: dir, Err: err}
	}
	return nil
}
