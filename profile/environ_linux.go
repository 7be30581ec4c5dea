package profile

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// blankInitialEnviron overwrites, with NUL bytes, the values of the
// variables names in the environment block the process started with (the
// memory /proc/PID/environ reads, between env_start and env_end of
// /proc/self/stat). Go copied that block at start and never reads it
// again, so only /proc's view changes.
func blankInitialEnviron(names []string) error {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return fmt.Errorf("bad /proc/self/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 49 { // fields 3.. ; env_start and env_end are fields 50 and 51
		return fmt.Errorf("/proc/self/stat has no env_start")
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64)
	end, err2 := strconv.ParseInt(f[48], 10, 64)
	if err1 != nil || err2 != nil || end <= start {
		return fmt.Errorf("bad env_start/env_end in /proc/self/stat")
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return err
	}
	changed := false
	off := 0
	for _, entry := range bytes.Split(block, []byte{0}) {
		name, _, ok := bytes.Cut(entry, []byte("="))
		if ok && contains(names, string(name)) {
			for j := off + len(name) + 1; j < off+len(entry); j++ {
				block[j] = 0
			}
			changed = true
		}
		off += len(entry) + 1
	}
	if !changed {
		return nil
	}
	_, err = mem.WriteAt(block, start)
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
