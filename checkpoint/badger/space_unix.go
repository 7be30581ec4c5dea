//go:build linux || darwin

package badger

import "syscall"

// freeSpace returns the bytes an unprivileged user may still write on
// dir's file system; ok is false when it cannot tell.
func freeSpace(dir string) (free int64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
