// Package landlock confines the writes of the commands and CLI agent
// sessions that package agent and its drivers start, with Linux's Landlock:
// a goroutine locked to its thread restricts that thread (RestrictThread),
// and every process started from it inherits the restriction. Go runs the
// caller's function on such a thread, which ends with it. Reads are never
// restricted. From Landlock ABI 6 they also cannot signal a process outside
// the restriction (gaffer, the user's other programs). Where the kernel has
// no Landlock, Available says why.
package landlock
