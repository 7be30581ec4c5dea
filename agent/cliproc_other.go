//go:build !unix

package agent

import "os/exec"

// startInGroup starts cmd; there are no process groups here, and nothing
// is recorded.
func startInGroup(cmd *exec.Cmd, rec GroupRecorder) (forget func(), err error) {
	return func() {}, cmd.Start()
}

// signalGroup kills cmd's process; there are no process groups here.
func signalGroup(cmd *exec.Cmd, terminate bool) error {
	if terminate {
		return nil
	}
	return cmd.Process.Kill()
}
