//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in its own process group and makes cancelling
// it kill the whole group, so a command's children die with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
