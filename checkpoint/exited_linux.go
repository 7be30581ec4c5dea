package checkpoint

import (
	"bytes"
	"os"
	"strconv"
)

// exited reports whether pid has exited but not been reaped (state Z, a
// zombie, or X, dead), from /proc/PID/stat. Any doubt is "not exited".
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself hold ") ".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	st := b[i+2]
	return st == 'Z' || st == 'X'
}
