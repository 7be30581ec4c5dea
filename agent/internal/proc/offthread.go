package proc

// OffThread returns a Recorder that runs rec's calls on goroutines of their
// own. A confined process is started from a thread that Landlock restricts
// (see package landlock), while the records live beside the store, which
// may be anywhere. Go never runs another goroutine on a locked thread and
// starts new threads from an unrestricted template thread, so these calls
// are not confined. A nil rec gives nil.
func OffThread(rec Recorder) Recorder {
	if rec == nil {
		return nil
	}
	return offThread{rec}
}

type offThread struct{ rec Recorder }

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
