// Package proc starts the commands and CLI agent sessions of package agent
// and its drivers each in a process group of its own: with a Recorder, the
// group is recorded before the process may do anything (it starts behind a
// gate that waits for gaffer's "go"), a watchdog in the group ends it when
// gaffer dies, and on Linux the group's leader gets SIGKILL then too
// (Pdeathsig). Signal ends a group; AwaitExit waits for its leader without
// reaping it. An Isolation starts a process in a user namespace of its
// own, so that it cannot read the environment or memory of processes
// outside its session; StartIn starts one through the sandbox helper
// (HelperMain), which also makes the repository's .git read-only for it.
package proc
