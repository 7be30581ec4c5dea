//go:build unix

package hoststore

import (
	"errors"
	"syscall"
)

// flock takes an exclusive flock on fd without waiting; errHeld when
// another open file holds it.
func flock(fd uintptr) error {
	for {
		err := syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errHeld
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return err
	}
}
