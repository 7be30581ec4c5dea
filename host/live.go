package host

import (
	"sync"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// liveSet counts the runs a host's runner is driving now. Badger lets one
// process open a store, and the commands of other processes reach that
// one (the control socket), so a run whose state says running but which
// this host does not drive was stopped: killed, or ended by an error (a
// network error, a driver that could not start) that left its status as
// it was.
type liveSet struct {
	mu   sync.Mutex
	runs map[string]int // run id -> Run/Resume calls going on
}

// track starts counting r's runs in progress; the returned func stops.
func (ls *liveSet) track(r *graph.Runner[state.ExecutionState]) func() {
	ls.mu.Lock()
	ls.runs = map[string]int{}
	ls.mu.Unlock()
	return r.Subscribe(func(ev graph.Event) {
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
}

// driving reports whether runID is being driven now.
func (ls *liveSet) driving(runID string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.runs[runID] > 0
}

// stopped reports whether snap is a run whose status is running, with no
// interrupt waiting, that this host does not drive.
func (h *Host) stopped(snap graph.Snapshot[state.ExecutionState]) bool {
	return ViewStatus(snap) == state.RunRunning && !h.live.driving(snap.RunID)
}
