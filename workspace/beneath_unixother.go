//go:build unix && !linux

package workspace

import "golang.org/x/sys/unix"

// openBeneath opens the directory name in the directory dirfd without
// following a symbolic link (O_NOFOLLOW: name is a single element).
func openBeneath(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
}
