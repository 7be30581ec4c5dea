//go:build unix && !linux

package proc

import "syscall"

// deathSignal does nothing where there is no Pdeathsig.
func deathSignal(attr *syscall.SysProcAttr) {}

// AwaitExit returns at once: the group is killed after Wait instead.
func AwaitExit(pid int) {}
