//go:build !unix

package agent

import "os/exec"

// startInGroup does nothing where there are no process groups.
func startInGroup(cmd *exec.Cmd) {}

// signalGroup kills cmd's process; there are no process groups here.
func signalGroup(cmd *exec.Cmd, terminate bool) error {
	if terminate {
		return nil
	}
	return cmd.Process.Kill()
}
