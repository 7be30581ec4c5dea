//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// WriteFileBeneath writes data to rel (a slash path) beneath the
// directory root, crash-safely as WriteFileAtomic does (a temporary file
// beside it, synced, given perm exactly, renamed over it, the directory
// synced), making the missing directories on the way, and without
// following a symbolic link anywhere beneath root: every element is
// opened relative to its parent, refusing links (on Linux with openat2's
// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS). A link at any element of rel,
// the file itself included, is a *LinkError (ErrLink) and nothing is
// written.
func WriteFileBeneath(root, rel string, data []byte, perm os.FileMode) error {
	full := filepath.Join(root, filepath.FromSlash(rel))
	parts, err := splitBeneath(rel)
	if err != nil {
		return &Error{Op: "write", Path: full, Err: err}
	}
	dir, err := openDirBeneath(root, parts[:len(parts)-1], true)
	if err != nil {
		return wrapBeneath("write", full, err)
	}
	defer dir.close()
	base := parts[len(parts)-1]
	if err := dir.notLink(base); err != nil {
		return wrapBeneath("write", full, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return &Error{Op: "write", Path: full, Err: errors.New("it is a directory")}
	}
	tmp, f, err := dir.createTemp(base)
	if err != nil {
		return &Error{Op: "write", Path: full, Err: err}
	}
	fail := func(err error) error {
		_ = f.Close()
		_ = unix.Unlinkat(dir.fd, tmp, 0)
		return &Error{Op: "write", Path: full, Err: err}
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
		_ = unix.Unlinkat(dir.fd, tmp, 0)
		return &Error{Op: "write", Path: full, Err: err}
	}
	// renameat replaces base itself, never what it might point to.
	if err := unix.Renameat(dir.fd, tmp, dir.fd, base); err != nil {
		_ = unix.Unlinkat(dir.fd, tmp, 0)
		return &Error{Op: "write", Path: full, Err: err}
	}
	if err := unix.Fsync(dir.fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return &Error{Op: "sync", Path: filepath.Dir(full), Err: err}
	}
	return nil
}

// CheckBeneath returns a *LinkError when an element of rel (a slash path
// beneath root) that exists is a symbolic link; nil when none is, or when
// rel does not exist (up to the first missing element).
func CheckBeneath(root, rel string) error {
	full := filepath.Join(root, filepath.FromSlash(rel))
	parts, err := splitBeneath(rel)
	if err != nil {
		return &Error{Op: "check", Path: full, Err: err}
	}
	dir, err := openDirBeneath(root, parts[:len(parts)-1], false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return wrapBeneath("check", full, err)
	}
	defer dir.close()
	return wrapBeneath("check", full, dir.notLink(parts[len(parts)-1]))
}

// wrapBeneath returns a *LinkError as it is, and any other error as an
// *Error of op on full.
func wrapBeneath(op, full string, err error) error {
	var le *LinkError
	if err == nil || errors.As(err, &le) {
		return err
	}
	return &Error{Op: op, Path: full, Err: err}
}

// beneathDir is an open directory beneath a root, and its path there.
type beneathDir struct {
	root string
	rel  string // slash path, "" for the root
	fd   int
}

func (d beneathDir) close() { _ = unix.Close(d.fd) }

// link returns the *LinkError for name, a link in d.
func (d beneathDir) link(name string) error {
	buf := make([]byte, 4096)
	n, _ := unix.Readlinkat(d.fd, name, buf)
	return &LinkError{Root: d.root, Path: path.Join(d.rel, name), Target: string(buf[:n])}
}

// notLink returns a *LinkError when name in d is a symbolic link; nil when
// it is anything else (a directory too) or missing.
func (d beneathDir) notLink(name string) error {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return d.link(name)
	}
	return nil
}

// createTemp creates, exclusively and without following a link, the
// temporary file for base in d, named as atomicfile names its own (so
// that atomicfile.IsTemp knows it).
func (d beneathDir) createTemp(base string) (string, *os.File, error) {
	for range 100 {
		name := "." + base + atomicfile.TempMarker + strconv.FormatUint(rand.Uint64(), 36)
		fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return name, os.NewFile(uintptr(fd), filepath.Join(d.root, filepath.FromSlash(path.Join(d.rel, name)))), nil
	}
	return "", nil, fs.ErrExist
}

// openDirBeneath opens the directory root/dirs..., each element opened
// relative to the one before without following a symbolic link, and with
// mkdir made when missing. A link is a *LinkError; a missing element
// without mkdir is an fs.ErrNotExist.
func openDirBeneath(root string, dirs []string, mkdir bool) (beneathDir, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return beneathDir{}, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	d := beneathDir{root: root, fd: fd}
	for _, name := range dirs {
		next, err := openBeneath(d.fd, name)
		if errors.Is(err, unix.ENOENT) && mkdir {
			if err := unix.Mkdirat(d.fd, name, 0o777); err != nil && !errors.Is(err, unix.EEXIST) {
				d.close()
				return beneathDir{}, &fs.PathError{Op: "mkdir", Path: path.Join(d.rel, name), Err: err}
			}
			next, err = openBeneath(d.fd, name)
		}
		if err != nil {
			var linkErr error
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
				linkErr = d.notLink(name)
			}
			d.close()
			if linkErr != nil {
				return beneathDir{}, linkErr
			}
			if errors.Is(err, unix.ENOENT) {
				return beneathDir{}, &fs.PathError{Op: "open", Path: path.Join(d.rel, name), Err: fs.ErrNotExist}
			}
			return beneathDir{}, &fs.PathError{Op: "open", Path: path.Join(d.rel, name), Err: err}
		}
		d.close()
		d = beneathDir{root: root, rel: strings.TrimPrefix(d.rel+"/"+name, "/"), fd: next}
	}
	return d, nil
}

// ReadFileBeneath reads rel (a slash path) beneath root, at most max
// bytes, without following a symbolic link anywhere beneath root, and
// only when it is a regular file: a link is a *LinkError (ErrLink), a
// named pipe, device or directory an *Error, so that a file an agent
// planted can neither point gaffer's read elsewhere nor block it. A
// missing file is an fs.ErrNotExist; a longer one is an *Error.
func ReadFileBeneath(root, rel string, max int64) ([]byte, error) {
	full := filepath.Join(root, filepath.FromSlash(rel))
	parts, err := splitBeneath(rel)
	if err != nil {
		return nil, &Error{Op: "read", Path: full, Err: err}
	}
	dir, err := openDirBeneath(root, parts[:len(parts)-1], false)
	if err != nil {
		return nil, wrapBeneath("read", full, err)
	}
	defer dir.close()
	base := parts[len(parts)-1]
	if err := dir.notLink(base); err != nil {
		return nil, wrapBeneath("read", full, err)
	}
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
	fd, err := unix.Openat(dir.fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, dir.link(base)
	}
	if err != nil {
		return nil, &Error{Op: "read", Path: full, Err: &fs.PathError{Op: "open", Path: full, Err: err}}
	}
	f := os.NewFile(uintptr(fd), full)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &Error{Op: "read", Path: full, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{Op: "read", Path: full, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &Error{Op: "read", Path: full, Err: err}
	}
	if int64(len(b)) > max {
		return nil, &Error{Op: "read", Path: full, Err: fmt.Errorf("longer than %d bytes", max)}
	}
	return b, nil
}
