// Package procgroup records the process groups of the agents a gaffer
// process starts, so that the next process to open the store ends the ones
// a killed gaffer left running.
//
// A Registry is a directory beside the store (<store>.groups, mode 0700)
// with one file per live group, named by its id and holding the group id,
// the start time of its leader (field 22 of /proc/PID/stat, in clock ticks
// since boot) and the boot id. Record writes that file and fsyncs it and
// the directory before it returns; the agent package lets the process run
// only after that (a start gate: the child waits on a pipe), so a group is
// on disk before it does any work.
//
// KillOrphans, which only the process that holds the store calls (so no
// other gaffer process can own a recorded group), kills every recorded
// group still alive and removes its record. A group is taken as ours when
// the boot id matches and either its leader is alive with the recorded
// start time, or the leader is gone and the processes still in the group
// started after it: Linux does not reuse a group's id while the group has
// members, so a recycled pid that now leads an unrelated group has another
// start time and is never killed. The one case this cannot tell apart — a
// recycled pid that led a new group and died, leaving members, all while
// no gaffer ran — is left as a known limit.
//
// Outside Linux there is no /proc: Record and KillOrphans do nothing.
package procgroup
