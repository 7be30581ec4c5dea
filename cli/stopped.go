package cli

import (
	"sync"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// stoppedNote follows "running" in status and list for a run that no
// process is running.
const stoppedNote = "stopped: no process is running it — gaffer resume continues it"

// liveRuns maps each runner this process has compiled (openEnv) to the
// runs it is driving now. Badger lets one process open a store, and the
// commands of other processes run in that one (the control socket), so a
// run whose state says running but which no runner here drives was
// stopped: killed, or ended by an error (a network error, a driver that
// could not start) that left its status as it was.
var liveRuns sync.Map // *graph.Runner[state.ExecutionState] -> *liveSet

type liveSet struct {
	mu   sync.Mutex
	runs map[string]int // run id -> Run/Resume calls going on
}

// trackLive starts counting r's runs in progress; the returned func stops.
func trackLive(r *graph.Runner[state.ExecutionState]) func() {
	ls := &liveSet{runs: map[string]int{}}
	liveRuns.Store(r, ls)
	unsubscribe := r.Subscribe(func(ev graph.Event) {
		d := 0
		switch ev.Kind {
		case graph.RunStarted:
			d = 1
		case graph.RunFinished:
			d = -1
		default:
			return
		}
		ls.mu.Lock()
		defer ls.mu.Unlock()
		if ls.runs[ev.RunID] += d; ls.runs[ev.RunID] <= 0 {
			delete(ls.runs, ev.RunID)
		}
	})
	return func() {
		unsubscribe()
		liveRuns.Delete(r)
	}
}

// driving reports whether this process is running runID now.
func (e *env) driving(runID string) bool {
	v, ok := liveRuns.Load(e.runner)
	if !ok {
		return false
	}
	ls := v.(*liveSet)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.runs[runID] > 0
}

// markStopped sets v.Stopped (and v.LastError, the state's last error)
// for a run whose status is running, with no interrupt waiting, that no
// process is running.
func (e *env) markStopped(v *RunView, snap graph.Snapshot[state.ExecutionState]) {
	if runStatus(snap) != state.RunRunning || e.driving(snap.RunID) {
		return
	}
	v.Stopped = true
	if n := len(snap.State.Errors); n > 0 {
		v.LastError = snap.State.Errors[n-1]
	}
}

// statusText is v's status for text output: "running (stopped: …)" for a
// stopped run.
func (v RunView) statusText() string {
	if v.Stopped {
		return v.Status + " (" + stoppedNote + ")"
	}
	return v.Status
}
