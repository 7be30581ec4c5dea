package landlock

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Rules confine the writes of the processes a thread starts.
type Rules struct {
	abi int // the kernel's Landlock ABI version
}

// Available returns the rules when the kernel has Landlock, or nil and why
// not.
func Available() (*Rules, string) {
	abi, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return nil, fmt.Sprintf("the kernel has no Landlock (%v; it needs Linux 5.13 or later with Landlock enabled)", e)
	}
	return &Rules{abi: int(abi)}, ""
}

// ABI returns the kernel's Landlock ABI version.
func (r *Rules) ABI() int { return r.abi }

// rights returns the write rights the ruleset handles (all of them) and
// those a file beneath /dev keeps.
func (r *Rules) rights() (dir, dev uint64) {
	dir = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	dev = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	if r.abi >= 2 {
		dir |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if r.abi >= 3 {
		dir |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
		dev |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return dir, dev
}

// RestrictThread confines the calling thread, and every process it starts
// from now on, to writing beneath the paths writable (those that exist; a
// file gets the rights of a file only) and to the files of /dev, and, from
// Landlock ABI 6 (Linux 6.12), to signalling processes it confines too.
// Reads are not restricted. The caller has locked the goroutine to its thread and
// never unlocks it (see Go).
func (r *Rules) RestrictThread(writable []string) error {
	dirRights, devRights := r.rights()
	attr := unix.LandlockRulesetAttr{Access_fs: dirRights}
	if r.abi >= 6 {
		// Signals only to processes of the same domain: a confined
		// command cannot stop or kill gaffer, or any other process of
		// the user's.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	add := func(path string, rights uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= devRights // a file takes file rights only
		}
		pb := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(pfd)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&pb)), 0, 0, 0); e != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", path, e)
		}
		return nil
	}
	for _, d := range writable {
		if err := add(d, dirRights); err != nil {
			return err
		}
	}
	if err := add("/dev", devRights); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}
