// Package ioerr tells the machine's I/O errors — a full disk, a failing
// device, an exhausted quota, a file system mounted read-only — from other
// errors. gaffer stops a run on them (for `gaffer resume` once the machine
// is put right) instead of counting them against an agent's attempts.
package ioerr

import (
	"errors"
	"strings"
	"syscall"
)

// machine are the errnos of the machine rather than of the work.
var machine = []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EDQUOT, syscall.EROFS}

// Machine reports whether err's chain holds ENOSPC, EIO, EDQUOT or EROFS.
func Machine(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range machine {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Named returns the errno of the machine's that msg names in strerror's
// words ("No space left on device"), as another program's error message
// does (git's, with LC_ALL=C), or nil when it names none.
func Named(msg string) error {
	msg = strings.ToLower(msg)
	for _, e := range machine {
		if strings.Contains(msg, e.Error()) {
			return e
		}
	}
	return nil
}
