//go:build !linux

package proc

import "os/exec"

func (iso *Isolation) apply(cmd *exec.Cmd) {}

func probe() (*Isolation, string) {
	return nil, "user namespaces are Linux only"
}

func mapsPending(cmd *exec.Cmd) bool { return false }

func writeIDMaps(pid int) error { return nil }
