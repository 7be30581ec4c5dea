package ioerr

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

func TestMachine(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("no space left on device"), false}, // text is not enough
		{&fs.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("commit: %w", &fs.PathError{Op: "write", Path: "f", Err: syscall.EIO}), true},
		{syscall.EDQUOT, true},
		{syscall.EROFS, true},
		{&fs.PathError{Op: "open", Path: "f", Err: syscall.ENOENT}, false},
		{syscall.EACCES, false},
	} {
		if got := Machine(c.err); got != c.want {
			t.Errorf("Machine(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
