//go:build unix && !linux

package agent

import "syscall"

// deathSignal does nothing where there is no Pdeathsig.
func deathSignal(attr *syscall.SysProcAttr) {}

// awaitExit returns at once: the group is killed after Wait instead.
func awaitExit(pid int) {}
