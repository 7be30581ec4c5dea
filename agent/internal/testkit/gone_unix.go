//go:build unix

package testkit

import (
	"os"
	"path/filepath"
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

// FindProcess returns the pid of a live process, seen from this process
// (a process in a PID namespace of its own has another pid inside it),
// whose /proc/PID/cmdline (its arguments, each ended by a NUL byte)
// contains part; 0 when there is none.
func FindProcess(part string) int {
	pids := FindProcesses(part)
	if len(pids) == 0 {
		return 0
	}
	return pids[0]
}

// FindProcesses returns the pids of the live processes FindProcess
// would find.
func FindProcesses(part string) []int {
	return livePids(func(n string) bool {
		b, err := os.ReadFile("/proc/" + n + "/cmdline")
		return err == nil && strings.Contains(string(b), part)
	})
}

// livePids returns the live processes but this one (not zombies) for
// whose /proc entry name keep is true.
func livePids(keep func(name string) bool) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err == nil && pid != os.Getpid() && keep(n) && Pgrp(pid) > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// Pgrp returns the process group of process pid, seen from this process;
// 0 when it is gone or a zombie.
func Pgrp(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || f[0] == "Z" {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

// HostPID returns the pid, seen from this process, of the live process
// whose pid in its own PID namespace is pid and whose working directory
// is cwd: a command in a PID namespace of its own writes its own pid,
// which means another process out here. A process in this namespace is
// its own pid; pid itself when none is found.
func HostPID(pid int, cwd string) int {
	for _, p := range ProcessesIn(cwd) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f, ok := strings.CutPrefix(line, "NSpid:"); ok {
				ids := strings.Fields(f)
				if len(ids) > 0 && ids[len(ids)-1] == strconv.Itoa(pid) {
					return p
				}
			}
		}
	}
	return pid
}

// ProcessesIn returns the live processes (not zombies) whose working
// directory is dir: a session's, whatever namespace or group they are in.
func ProcessesIn(dir string) []int {
	want := map[string]bool{dir: true}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		want[r] = true
	}
	return livePids(func(n string) bool {
		cwd, err := os.Readlink("/proc/" + n + "/cwd")
		return err == nil && want[cwd]
	})
}

// NoneIn waits (up to ten seconds) until no live process works in dir
// (ProcessesIn), and returns those left.
func NoneIn(dir string) []int {
	var left []int
	for range 1000 {
		if left = ProcessesIn(dir); len(left) == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return left
}
