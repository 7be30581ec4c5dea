package tmpdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// stat returns field 22 of /proc/PID/stat, the process's start time in
// clock ticks since boot, and its state (field 3).
func stat(pid int) (start uint64, state byte, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name, in parentheses, may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	start, err = strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("bad /proc/%d/stat: %w", pid, err)
	}
	return start, f[0][0], nil
}

// startTime returns pid's start time.
func startTime(pid int) (uint64, error) {
	start, _, err := stat(pid)
	return start, err
}

// alive reports whether the process pid that started at start may still
// run: it is gone when there is no such process, when it is a zombie,
// or when the pid is another process's now. Any doubt is "alive".
func alive(pid int, start uint64) bool {
	got, state, err := stat(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return !signalGone(pid) // no /proc entry: ask the kernel
	case err != nil:
		return true
	case state == 'Z' || state == 'X':
		return false
	case start != 0 && got != start:
		return false
	}
	return true
}
