//go:build unix

package agent

import (
	"errors"
	"os/exec"
	"syscall"
)

// startInGroup makes cmd start in a process group of its own.
func startInGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig (terminate: SIGTERM, else SIGKILL) to the process
// group led by cmd's process. A group that is already gone is not an error.
func signalGroup(cmd *exec.Cmd, terminate bool) error {
	sig := syscall.SIGKILL
	if terminate {
		sig = syscall.SIGTERM
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
