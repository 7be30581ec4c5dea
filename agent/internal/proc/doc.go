// Package proc starts the commands and CLI agent sessions of package agent
// and its drivers each in a process group of its own: with a Recorder, the
// group is recorded before the process may do anything (it starts behind a
// gate that waits for gaffer's "go"), a watchdog in the group ends it when
// gaffer dies, and on Linux the group's leader gets SIGKILL then too
// (Pdeathsig). Group.Kill ends a group once its command has exited, and
// with it, when the command has a user namespace of its own but no PID
// namespace, every process of that namespace wherever it went (setsid, a
// double fork); AwaitExit waits for a group's leader without reaping it.
// An Isolation starts a process in a user namespace of its own, so that it
// cannot read the environment or memory of processes outside its session.
// StartIn starts one through the sandbox helper (HelperMain), which makes
// the .git of the directories it may write read-only, layers the Go caches
// for it (GoCaches) and, where the kernel allows (Helper.PID), runs it in a
// PID namespace of its own with /proc mounted anew, as the child of the
// helper, the namespace's first process: the command sees and signals
// only its own processes, and when it exits the kernel kills every
// process left in the namespace.
package proc
