package landlock

import "runtime"

// Go runs fn on a goroutine of its own, locked to a thread that is first
// confined by r to writing beneath writable (see RestrictThread), and
// returns at once. When the confinement fails, fn is called with that
// error and should start nothing. The thread is never unlocked, so Go ends
// it when fn returns: fn waits for the processes it starts (that keeps
// their Pdeathsig, which fires when the starting thread ends, meaningful).
// Nothing else runs on the thread; work that must not be confined, such as
// recording a process group beside the store, goes to other goroutines.
func (r *Rules) Go(writable []string, fn func(confineErr error)) {
	go func() {
		runtime.LockOSThread()
		fn(r.RestrictThread(writable))
	}()
}
