package proc

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// nsID identifies a namespace: the device and inode of its /proc link.
type nsID struct{ dev, ino uint64 }

func (n nsID) zero() bool { return n == nsID{} }

// nsGetParent is NS_GET_PARENT (linux/nsfs.h): the namespace a user or
// PID namespace was made in.
const nsGetParent = 0xb702

// nsOf returns the user namespace of process pid ("self" for this one).
func nsOf(pid string) (nsID, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+pid+"/ns/user", &st); err != nil {
		return nsID{}, err
	}
	return nsID{uint64(st.Dev), st.Ino}, nil
}

// userNS returns the user namespace process pid started in, when it is
// not this process's (a command an Isolation or the helper started), and
// a file that holds it open: the kernel frees a namespace whose last
// process exits, and may give its inode to a new one, which a sweep
// would then take for the session's. release closes it.
func userNS(pid int) (ns nsID, release func()) {
	release = func() {}
	own, err := nsOf("self")
	if err != nil {
		return nsID{}, release
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nsID{}, release
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || (nsID{uint64(st.Dev), st.Ino}) == own {
		unix.Close(fd)
		return nsID{}, release
	}
	return nsID{uint64(st.Dev), st.Ino}, func() { unix.Close(fd) }
}

// nested reports whether the user namespace of process pid is ns or one
// made inside it (a session may make its own, and the processes there are
// the session's too), walking up from it until ns, this process's own
// namespace or the top.
func nested(pid string, ns, own nsID) bool {
	fd, err := unix.Open("/proc/"+pid+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	for range 33 { // the kernel nests user namespaces 32 deep at most
		var st unix.Stat_t
		err := unix.Fstat(fd, &st)
		id := nsID{uint64(st.Dev), st.Ino}
		if err != nil || id == own {
			break
		}
		if id == ns {
			unix.Close(fd)
			return true
		}
		parent, err := unix.IoctlRetInt(fd, nsGetParent)
		unix.Close(fd)
		if err != nil {
			return false
		}
		fd = parent
	}
	unix.Close(fd)
	return false
}

// sweep kills with SIGKILL every live process of user namespace ns and
// of the namespaces nested in it, wherever in the process tree they went
// (setsid, a double fork), round after round until a round finds none
// (a process may fork as it is found), for two seconds at most. It
// returns the pids it killed.
func sweep(ns nsID) []int {
	own, err := nsOf("self")
	if err != nil {
		return nil
	}
	var killed []int
	seen := map[int]bool{}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		found := 0
		for _, pid := range members(ns, own) {
			found++
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil && !seen[pid] {
				seen[pid] = true
				killed = append(killed, pid)
			}
		}
		if found == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return killed
}

// members lists the live (not zombie) processes of user namespace ns and
// of those nested in it.
func members(ns, own nsID) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == os.Getpid() {
			continue
		}
		id, err := nsOf(name)
		if err != nil || id == own || (id != ns && !nested(name, ns, own)) {
			continue
		}
		if zombie(name) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// zombie reports whether process pid has exited and waits to be reaped
// (or is gone).
func zombie(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
