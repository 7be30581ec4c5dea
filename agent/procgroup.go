package agent

// GroupRecorder durably records the process group of a command an agent
// runs, before the command does any work, so that a later gaffer process
// can end a group that a killed one left running (internal/procgroup is
// the implementation over a directory beside the store).
type GroupRecorder interface {
	// Record notes that process group pgid, led by the live process pgid,
	// is ours, and returns once the note is durable. The returned function
	// removes the note; it is called once the group has been killed.
	Record(pgid int) (forget func(), err error)
}
