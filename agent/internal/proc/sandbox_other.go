//go:build !linux

package proc

import (
	"errors"
	"os/exec"
)

// HelperMain does nothing outside Linux.
func HelperMain() {}

func (sb Sandbox) wrap(cmd *exec.Cmd, exe string) error {
	return errors.New("agent: the sandbox helper is Linux only")
}

func probeHelper() probed {
	why := "the sandbox helper is Linux only"
	return probed{why: why, pidWhy: why, layersWhy: why}
}
