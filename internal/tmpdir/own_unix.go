//go:build unix

package tmpdir

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes f's exclusive flock: waiting for it when wait, else
// failing at once when another holds it.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// mine reports whether path is a directory, not a link, of this user's.
func mine(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// signalGone reports whether kill(pid, 0) says there is no such process.
func signalGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
