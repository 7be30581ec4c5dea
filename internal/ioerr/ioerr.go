// Package ioerr tells the machine's I/O errors — a full disk, a failing
// device, an exhausted quota, a file system mounted read-only — from other
// errors. gaffer stops a run on them (for `gaffer resume` once the machine
// is put right) instead of counting them against an agent's attempts.
package ioerr

import (
	"errors"
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
