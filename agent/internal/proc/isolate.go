package proc

import (
	"os/exec"
	"sync"
)

// Isolator says, once, whether the kernel lets commands run in a user
// namespace of their own (see Isolation), and hands out the Isolation. Its
// zero value is ready to use.
type Isolator struct {
	once sync.Once
	iso  *Isolation
	why  string
}

// Get returns the Isolation, or nil and why the kernel refuses one. The
// first call finds out by starting a shell in a new user namespace.
func (i *Isolator) Get() (*Isolation, string) {
	i.once.Do(func() { i.iso, i.why = probe() })
	return i.iso, i.why
}

// Isolation starts processes in a user namespace of their own, with the
// caller's user and group ids mapped to themselves (files, ownership and
// the process's ids look as before). The kernel lets a process read
// another's /proc/PID/environ, mem, maps or fds, or ptrace it, only with
// CAP_SYS_PTRACE in the target's user namespace (or from the same
// namespace): a process in the new namespace, even its root, has no
// capability in gaffer's, so it cannot read the environment or memory of
// gaffer, of the user's shell or of any process started outside its own
// session. The processes it starts itself share its namespace and stay
// visible to it.
type Isolation struct{}

// Apply makes cmd start in a new user namespace; Start keeps the setting.
func (iso *Isolation) Apply(cmd *exec.Cmd) { iso.apply(cmd) }
