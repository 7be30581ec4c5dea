//go:build !unix

package proc

import "os/exec"

// Start starts cmd; there are no process groups here, and nothing is
// recorded.
func Start(cmd *exec.Cmd, rec Recorder) (*Group, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Group{cmd: cmd, forget: func() {}}, nil
}

// Kill kills cmd's process; there are no process groups here.
func (g *Group) Kill() []int {
	_ = g.cmd.Process.Kill()
	return nil
}

// Signal kills cmd's process; there are no process groups here.
func Signal(cmd *exec.Cmd, terminate bool) error {
	if terminate {
		return nil
	}
	return cmd.Process.Kill()
}

// AwaitExit returns at once: there is no waiting without reaping here.
func AwaitExit(pid int) {}
