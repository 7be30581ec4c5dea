//go:build !unix

package agent

import "os/exec"

// setProcessGroup leaves cmd as it is: cancelling it kills the process only.
func setProcessGroup(cmd *exec.Cmd) {}
