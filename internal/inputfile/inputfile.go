package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

var (
	// ErrNotRegular is matched by the error for a file that is not a
	// regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge is matched by the error for a file over its limit.
	ErrTooLarge = errors.New("too large")
)

// LimitError is a file over its limit.
type LimitError struct {
	Path  string
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("read %s: over the limit of %s", e.Path, Size(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// Size writes n bytes for a person: "1 MiB", "64 KiB" or "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Options say what Read accepts besides a regular file.
type Options struct {
	// Pipes accepts a pipe or FIFO (/dev/stdin from a shell's pipe).
	Pipes bool
}

// Read returns the content of the file at path, at most limit bytes.
// What is not a regular file (nor, with o.Pipes, a pipe) is an
// *fs.PathError matching ErrNotRegular, naming what it is; a longer file
// is a *LimitError; nothing more than limit+1 bytes is read.
func Read(path string, limit int64, o Options) ([]byte, error) {
	// Stat first: opening a FIFO for reading waits for a writer.
	fi, err := stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, fi, o); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil { // what was opened, if the path changed since
		return nil, err
	}
	if err := check(path, fi, o); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &LimitError{Path: path, Limit: limit}
	}
	return data, nil
}

// check refuses fi unless it is a regular file, or a pipe with o.Pipes.
func check(path string, fi fs.FileInfo, o Options) error {
	m := fi.Mode()
	if m.IsRegular() || o.Pipes && m&fs.ModeNamedPipe != 0 {
		return nil
	}
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return &fs.PathError{Op: "open", Path: path, Err: notRegular(what)}
}

// notRegular says what a file is instead of a regular one: "is a
// directory", "is a character device, not a regular file".
type notRegular string

func (n notRegular) Error() string {
	if n == "a directory" {
		return "is a directory"
	}
	return "is " + string(n) + ", not a regular file"
}

// Is makes errors.Is(err, ErrNotRegular) true.
func (n notRegular) Is(target error) bool { return target == ErrNotRegular }

// Check returns the error Read would return for what path is (missing,
// unreadable, not a regular file), reading nothing.
func Check(path string, o Options) error {
	fi, err := stat(path)
	if err != nil {
		return err
	}
	if err := check(path, fi, o); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// stat is os.Stat, its error saying "open" as opening the file would.
func stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Op = "open"
	}
	return fi, err
}
