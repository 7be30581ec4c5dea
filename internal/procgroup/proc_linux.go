package procgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stat is what KillOrphans reads of /proc/PID/stat.
type stat struct {
	state byte
	pgrp  int
	start uint64
}

// readStat reads /proc/pid/stat.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	// The command name, in parentheses, may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); pgrp is field 5, starttime field 22.
	if len(f) < 20 {
		return stat{}, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	return stat{state: f[0][0], pgrp: pgrp, start: start}, nil
}

// startTime returns the start time of process pid.
func startTime(pid int) (uint64, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return st.start, nil
}

// bootID returns the kernel's boot id, which tells start times of
// different boots apart.
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// members returns the live (not zombie) processes of rec's group when
// the group is rec's, and nil otherwise.
func members(rec record) ([]int, error) {
	if leader, err := readStat(rec.pgid); err == nil && leader.state != 'Z' && leader.start != rec.start {
		return nil, nil // the pid was reused: not our group
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.pgrp != rec.pgid || st.state == 'Z' {
			continue
		}
		if st.start < rec.start || (pid == rec.pgid && st.start != rec.start) {
			return nil, nil // older than our leader: not our group
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// killGroup kills rec's group if it is alive and ours, and waits (up to
// ten seconds) until none of its processes is left.
func killGroup(rec record) (bool, error) {
	pids, err := members(rec)
	if err != nil || len(pids) == 0 {
		return false, err
	}
	if err := syscall.Kill(-rec.pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, err
	}
	for range 1000 {
		left := 0
		for _, pid := range pids {
			st, err := readStat(pid)
			if errors.Is(err, fs.ErrNotExist) || (err == nil && (st.state == 'Z' || st.pgrp != rec.pgid)) {
				continue
			}
			left++
		}
		if left == 0 {
			return true, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true, fmt.Errorf("processes of group %d still alive after SIGKILL", rec.pgid)
}
