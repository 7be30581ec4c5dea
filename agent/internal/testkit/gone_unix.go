//go:build unix

package testkit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Gone waits (up to five seconds) for process pid to be gone or a zombie.
func Gone(pid int) bool {
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return true
		}
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
