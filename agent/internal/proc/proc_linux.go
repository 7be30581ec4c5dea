package proc

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// deathSignal makes the kernel SIGKILL the command when the thread that
// started it ends. Go ends a thread only when a goroutine locked to it
// (runtime.LockOSThread) returns without unlocking; commands are started
// from unlocked goroutines, or (Toolbox.Run with Landlock) from a locked
// one that lives until the command has been waited for, so in practice the
// signal comes when gaffer dies. It reaches the group's leader only; the
// rest of a group is ended from the record (GroupRecorder) by the next
// gaffer process that opens the store.
func deathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// AwaitExit returns when process pid has exited, without reaping it.
func AwaitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
