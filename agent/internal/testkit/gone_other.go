//go:build !unix

package testkit

// Gone reports true: there are no process groups to outlive a command here.
func Gone(pid int) bool { return true }

// FindProcess returns 0: there is no /proc here.
func FindProcess(part string) int { return 0 }

// FindProcesses returns none: there is no /proc here.
func FindProcesses(part string) []int { return nil }

// Pgrp returns 0: there is no /proc here.
func Pgrp(pid int) int { return 0 }

// HostPID returns pid: there are no PID namespaces here.
func HostPID(pid int, cwd string) int { return pid }

// ProcessesIn returns none: there is no /proc here.
func ProcessesIn(dir string) []int { return nil }

// NoneIn returns none: there is no /proc here.
func NoneIn(dir string) []int { return nil }
