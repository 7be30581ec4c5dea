package workspace

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openBeneath opens the directory name in the directory dirfd with
// openat2, resolving beneath dirfd and through no symbolic link (nor
// /proc's magic links); on a kernel without openat2 (before 5.6), with
// openat and O_NOFOLLOW, which is the same for a single element.
func openBeneath(dirfd int, name string) (int, error) {
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(dirfd, name, &how)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	return fd, err
}
