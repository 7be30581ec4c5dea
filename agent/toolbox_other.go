//go:build !unix

package agent

import "os/exec"

// runCommand runs cmd; cancelling it kills the process only, and nothing
// confines it.
func (t *Toolbox) runCommand(cmd *exec.Cmd) error {
	return cmd.Run()
}
