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

// offThread runs rec's calls on goroutines of their own. A confined command
// is started from a thread that Landlock restricts to the repository, while
// the records live beside the store, which may be anywhere. Go never runs
// another goroutine on a locked thread and starts new threads from an
// unrestricted template thread, so these calls are not confined.
type offThread struct{ rec GroupRecorder }

func (o offThread) Record(pgid int) (func(), error) {
	type result struct {
		forget func()
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		forget, err := o.rec.Record(pgid)
		ch <- result{forget, err}
	}()
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	return func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.forget()
		}()
		<-done
	}, nil
}
