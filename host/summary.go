package host

import (
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/state"
)

// summaryVersion is the first byte of a summary's encoding (see
// encodeSummary). A summary of another version (or none: a run whose
// latest checkpoint an older gaffer wrote) is not read; the run's state
// is. (Versions 1 to 3 were layouts that never shipped.)
const summaryVersion = 4

// summaryErrorBytes bounds the one error a summary keeps.
const summaryErrorBytes = 400

// summaryMaxPhases bounds the phases a summary lists: a run of a longer
// plan has no summary (a listing reads its state), so that no step of a
// 1,000-task plan writes 20 KB of summary beside the chunk it changed.
const summaryMaxPhases = 64

// RunSummary is what a listing shows of a run (list, list --json, the
// inbox's index, the runs gauge, prune, and the choice of "the newest
// run"): every checkpoint carries one (graph.WithSummary), and the store
// keeps the latest one's with the run's index, so listing 10,000 runs
// reads 10,000 of these rather than 10,000 states. It is a few hundred
// bytes: the plan, the reviews, the commits of finished phases' work and
// all but the last error stay in the state. Entries hands them out as
// they are; read them, do not change them.
type RunSummary struct {
	// Seq is the checkpoint the summary was made for: the run's latest
	// must be that one for the summary to be read (a summary left behind
	// by an older gaffer's Delete, say, is not the run's).
	Seq             uint64
	Goal            string
	Slug            string
	CreatedAt       time.Time
	ExecDir         string
	WorkTree        string
	Status          state.RunStatus
	Mode            state.Mode
	CurrentPhase    int
	ReviewIteration int
	PlanRevision    int
	Phases          []PhaseSummary
	Usage           map[string]state.Usage
	LastError       string
	Stash           string // the user's stash commit, while not restored
	Next            []string
}

// PhaseSummary is one phase of a RunSummary: Commit is the commit of its
// work once it is done.
type PhaseSummary struct {
	Status    state.PhaseStatus
	Attempt   int
	Started   time.Time
	Completed time.Time
	Commit    string
}

// summarize is the summary a checkpoint of the workflow carries; nil for
// a plan of more than summaryMaxPhases phases.
func summarize(snap graph.Snapshot[state.ExecutionState]) ([]byte, error) {
	s := snap.State
	if len(s.Plan.Phases) > summaryMaxPhases {
		return nil, nil
	}
	sum := RunSummary{Seq: snap.Seq, Goal: s.Run.Goal, Slug: s.Run.Slug, CreatedAt: s.Run.CreatedAt,
		ExecDir: s.Run.ExecDir, WorkTree: s.Run.WorkTree, Status: s.Status, Mode: s.Plan.Mode,
		CurrentPhase: s.Progress.CurrentPhase(), ReviewIteration: s.ReviewIteration(),
		PlanRevision: s.Progress.PlanRevision, Usage: s.Usage, Next: snap.Next}
	if n := len(s.Errors); n > 0 {
		sum.LastError, _ = render.Clip(s.Errors[n-1], summaryErrorBytes)
	}
	if s.Stash.Pending() {
		sum.Stash = s.Stash.Commit
	}
	if len(s.Plan.Phases) > 0 {
		sum.Phases = make([]PhaseSummary, len(s.Plan.Phases))
		for i := range sum.Phases {
			if i < len(s.Progress.Phases) {
				ps := s.Progress.Phases[i]
				sum.Phases[i] = PhaseSummary{Status: ps.Status, Attempt: ps.Attempt, Started: ps.StartedAt,
					Completed: ps.CompletedAt, Commit: ps.PostCommit}
			}
		}
	}
	return encodeSummary(sum)
}

// fromSummary is the snapshot a run's summary stands for: the run's latest
// checkpoint, its state holding what the summary keeps (the views of a
// listing read nothing else), and whether the summary could be read. A
// run waiting on an interrupt is read whole instead (the question asked is
// in the interrupt), as is one whose summary is missing or of another
// version.
func fromSummary(info checkpoint.RunInfo) (graph.Snapshot[state.ExecutionState], bool) {
	var snap graph.Snapshot[state.ExecutionState]
	var sum RunSummary
	if !summaryOf(info, &sum, nil) {
		return snap, false
	}
	snapshotOf(info, &sum, &snap, nil)
	return snap, true
}

// snapshotOf sets *dst to the snapshot info's decoded summary sum stands
// for (see fromSummary), its lists cut from sl's.
func snapshotOf(info checkpoint.RunInfo, sum *RunSummary, dst *graph.Snapshot[state.ExecutionState], sl *slabs) {
	*dst = graph.Snapshot[state.ExecutionState]{RunID: info.RunID, Seq: info.Latest, Next: sum.Next,
		Status: info.Status, Time: info.Time}
	s := &dst.State
	s.Run = state.RunInfo{ID: info.RunID, Goal: sum.Goal, Slug: sum.Slug, CreatedAt: sum.CreatedAt,
		ExecDir: sum.ExecDir, WorkTree: sum.WorkTree}
	s.Plan.Mode = sum.Mode
	s.Progress.PlanRevision = sum.PlanRevision
	s.Usage, s.Status, s.Stash.Commit = sum.Usage, sum.Status, sum.Stash
	if sum.LastError != "" {
		s.Errors = carve(sl.stringList(), 1)
		s.Errors[0] = sum.LastError
	}
	if n := len(sum.Phases); n > 0 {
		s.Plan.Phases = carve(sl.phaseList(), n)
		s.Progress.Phases = carve(sl.phaseStateList(), n)
		for i, p := range sum.Phases {
			s.Plan.Phases[i] = state.Phase{Index: i}
			s.Progress.Phases[i] = state.PhaseState{Index: i, Status: p.Status, Attempt: p.Attempt,
				StartedAt: p.Started, CompletedAt: p.Completed, PostCommit: p.Commit}
		}
		if c := sum.CurrentPhase; sum.ReviewIteration > 0 && c >= 0 && c < n {
			// The current phase's review iteration is its lanes'.
			s.Progress.Phases[c].Lanes = []state.LaneProgress{{Iteration: sum.ReviewIteration}}
		}
	}
}

// summaryOf decodes info's summary into *sum, its lists cut from sl's,
// and reports whether there is one to read: not for a run waiting on an
// interrupt (the question is in the interrupt), nor for one whose summary
// is missing, of another version or not its latest checkpoint's.
func summaryOf(info checkpoint.RunInfo, sum *RunSummary, sl *slabs) bool {
	if info.Summary == nil || info.Status == graph.StatusInterrupted {
		return false
	}
	return decodeSummaryTo(info.Summary, sum, sl) == nil && sum.Seq == info.Latest
}

// slabs hold the lists of a listing's snapshots (10,000 runs, each with a
// few phases and an error): each list is cut from a slab that serves many
// runs, rather than allocated on its own. A nil *slabs allocates each
// list.
type slabs struct {
	phases      []state.Phase
	phaseStates []state.PhaseState
	strs        []string
	sums        []PhaseSummary
}

func (sl *slabs) phaseList() *[]state.Phase {
	if sl == nil {
		return new([]state.Phase)
	}
	return &sl.phases
}

func (sl *slabs) phaseStateList() *[]state.PhaseState {
	if sl == nil {
		return new([]state.PhaseState)
	}
	return &sl.phaseStates
}

func (sl *slabs) stringList() *[]string {
	if sl == nil {
		return new([]string)
	}
	return &sl.strs
}

func (sl *slabs) phaseSummaries() *[]PhaseSummary {
	if sl == nil {
		return new([]PhaseSummary)
	}
	return &sl.sums
}

// slabLen is how many entries a slab is made with, at the least.
const slabLen = 512

// carve returns the next n entries of *slab, a new slab when it has fewer
// left. Its capacity is n: an append to it does not reach the next list.
func carve[T any](slab *[]T, n int) []T {
	if len(*slab) < n {
		*slab = make([]T, max(n, slabLen))
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

// Listed is snap as List (and the choice of "the newest run") sees it:
// through the summary its checkpoint carries. ok is false for a snapshot
// that List reads whole: a run waiting on an interrupt.
func Listed(snap graph.Snapshot[state.ExecutionState]) (listed graph.Snapshot[state.ExecutionState], ok bool, err error) {
	sum, err := summarize(snap)
	if err != nil {
		return snap, false, err
	}
	status := snap.Status
	if snap.Interrupt != nil {
		status = graph.StatusInterrupted
	}
	listed, ok = fromSummary(checkpoint.RunInfo{RunID: snap.RunID, Latest: snap.Seq, Status: status, Time: snap.Time, Summary: sum})
	if !ok {
		return snap, false, nil
	}
	return listed, true, nil
}

// ListedEntry is snap as Entries has it: through the summary its
// checkpoint carries, its status as List sets it for a run a process is
// driving. ok is false for a snapshot that Entries reads whole: a run
// waiting on an interrupt.
func ListedEntry(snap graph.Snapshot[state.ExecutionState]) (e ListEntry, ok bool, err error) {
	sum, err := summarize(snap)
	if err != nil || snap.Interrupt != nil {
		return ListEntry{}, false, err
	}
	info := &checkpoint.RunInfo{RunID: snap.RunID, Latest: snap.Seq, Status: snap.Status, Time: snap.Time, Summary: sum}
	e = ListEntry{RunID: snap.RunID, Seq: snap.Seq, Summary: new(RunSummary), info: info}
	if !summaryOf(*info, e.Summary, nil) {
		return ListEntry{}, false, nil
	}
	e.Status = e.Summary.Status.String()
	return e, true, nil
}
