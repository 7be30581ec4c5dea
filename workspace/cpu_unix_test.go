//go:build unix

package workspace

import (
	"syscall"
	"time"
)

// selfCPU is the CPU time (user and system) this process and its
// children that ended (the git commands it ran) have used.
func selfCPU() time.Duration {
	var d time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return 0
		}
		d += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return d
}
