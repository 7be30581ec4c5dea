package proc

import "errors"

// ErrGroup is returned by Start when the process group could not be
// recorded; package agent exports it as agent.ErrProcessGroup.
var ErrGroup = errors.New("agent: cannot record the command's process group")

// Recorder durably records a process group before its command runs; it
// has the method set of agent.GroupRecorder, which documents it.
type Recorder interface {
	Record(pgid int) (forget func(), err error)
}
