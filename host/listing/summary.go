package listing

import (
	"time"
	"unsafe"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/state"
)

// Version is the first byte of a summary's encoding (see Encode). A summary of another version (or none: a run whose
// latest checkpoint an older gaffer wrote) is not read; the run's state
// is. (Versions 1 to 3 were layouts that never shipped; 4, of the
// release before lanes, lacked Summary.Lanes.)
const Version = 5

// summaryErrorBytes bounds the one error a summary keeps.
const summaryErrorBytes = 400

// MaxPhases bounds the phases a summary lists: a run of a longer
// plan has no summary (a listing reads its state), so that no step of a
// 1,000-task plan writes 20 KB of summary beside the chunk it changed.
const MaxPhases = 64

// Summary is what a listing shows of a run (list, list --json, the
// inbox's index, the runs gauge, prune, and the choice of "the newest
// run"): every checkpoint carries one (graph.WithSummary(Summarize)), and
// the store keeps the latest one's with the run's index, so listing
// 10,000 runs reads 10,000 of these rather than 10,000 states. It is a
// few hundred bytes: the plan, the reviews, the commits of finished
// phases' work and all but the last error stay in the state. A listing
// hands them out as they are; read them, do not change them.
type Summary struct {
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
	Phases          []Phase
	// Usage is the state's usage by role, sorted by role: a list, not
	// the state's map, as a listing decodes 10,000 of them and prints
	// their totals (UsageMap is the map).
	Usage     []RoleUsage
	LastError string
	Stash     string // the user's stash commit, while not restored
	Next      []string
	// Lanes is how many lanes the current phase has (0 for one). It came
	// with Version 5: a summary of 4 is not read, its run read whole.
	Lanes int
}

// RoleUsage is one role's usage in a Summary.
type RoleUsage struct {
	Role string
	state.Usage
}

// UsageMap is sum's usage as the state keeps it, by role; nil when it
// has none.
func (sum *Summary) UsageMap() map[string]state.Usage {
	if len(sum.Usage) == 0 {
		return nil
	}
	m := make(map[string]state.Usage, len(sum.Usage))
	for _, u := range sum.Usage {
		m[u.Role] = u.Usage
	}
	return m
}

// TotalUsage adds up sum's usage in the roles' order, as state.TotalOf
// adds up the state's map: the same total, to the last bit of the cost.
func (sum *Summary) TotalUsage() state.Usage {
	var total state.Usage
	for _, u := range sum.Usage {
		total = total.Add(u.Usage)
	}
	return total
}

// usageList is usage as a Summary keeps it, sorted by role.
func usageList(usage map[string]state.Usage) []RoleUsage {
	if len(usage) == 0 {
		return nil
	}
	out := make([]RoleUsage, 0, len(usage))
	for _, role := range sortedRoles(usage) {
		out = append(out, RoleUsage{Role: role, Usage: usage[role]})
	}
	return out
}

// Phase is one phase of a Summary: Commit is the commit of its work once
// it is done.
type Phase struct {
	Status    state.PhaseStatus
	Attempt   int
	Started   time.Time
	Completed time.Time
	Commit    string
}

// Summarize is the summary a checkpoint of the workflow carries
// (graph.WithSummary); nil for a plan of more than MaxPhases phases.
func Summarize(snap graph.Snapshot[state.ExecutionState]) ([]byte, error) {
	s := snap.State
	if len(s.Plan.Phases) > MaxPhases {
		return nil, nil
	}
	sum := Summary{Seq: snap.Seq, Goal: s.Run.Goal, Slug: s.Run.Slug, CreatedAt: s.Run.CreatedAt,
		ExecDir: s.Run.ExecDir, WorkTree: s.Run.WorkTree, Status: s.Status, Mode: s.Plan.Mode,
		CurrentPhase: s.Progress.CurrentPhase(), ReviewIteration: s.ReviewIteration(),
		PlanRevision: s.Progress.PlanRevision, Usage: usageList(s.Usage), Next: snap.Next}
	if n := len(s.Errors); n > 0 {
		sum.LastError, _ = render.Clip(s.Errors[n-1], summaryErrorBytes)
	}
	if s.Stash.Pending() {
		sum.Stash = s.Stash.Commit
	}
	if c := s.Progress.CurrentPhase(); c >= 0 && c < len(s.Progress.Phases) && len(s.Progress.Phases[c].Lanes) > 1 {
		sum.Lanes = len(s.Progress.Phases[c].Lanes)
	}
	if len(s.Plan.Phases) > 0 {
		sum.Phases = make([]Phase, len(s.Plan.Phases))
		for i := range sum.Phases {
			if i < len(s.Progress.Phases) {
				ps := s.Progress.Phases[i]
				sum.Phases[i] = Phase{Status: ps.Status, Attempt: ps.Attempt, Started: ps.StartedAt,
					Completed: ps.CompletedAt, Commit: ps.PostCommit}
			}
		}
	}
	return Encode(sum)
}

// FromRecord is the snapshot a run's record (its summary) stands for:
// the run's latest checkpoint, its state holding what the summary keeps
// (the views of a listing read nothing else), and whether the summary
// could be read. A run waiting on an interrupt is read whole instead (the
// question asked is in the interrupt), as is one whose summary is missing
// or of another version.
func FromRecord(info checkpoint.RunInfo) (graph.Snapshot[state.ExecutionState], bool) {
	var snap graph.Snapshot[state.ExecutionState]
	var sum Summary
	if !Read(info, &sum, nil) {
		return snap, false
	}
	SnapshotOf(info, &sum, &snap, nil)
	return snap, true
}

// SnapshotOf sets *dst to the snapshot info's decoded summary sum stands
// for (see FromRecord), its lists cut from sl's (nil: each made alone).
func SnapshotOf(info checkpoint.RunInfo, sum *Summary, dst *graph.Snapshot[state.ExecutionState], sl *Slabs) {
	*dst = graph.Snapshot[state.ExecutionState]{RunID: info.RunID, Seq: info.Latest, Next: sum.Next,
		Status: info.Status, Time: info.Time}
	s := &dst.State
	s.Run = state.RunInfo{ID: info.RunID, Goal: sum.Goal, Slug: sum.Slug, CreatedAt: sum.CreatedAt,
		ExecDir: sum.ExecDir, WorkTree: sum.WorkTree}
	s.Plan.Mode = sum.Mode
	s.Progress.PlanRevision = sum.PlanRevision
	s.Usage, s.Status, s.Stash.Commit = sum.UsageMap(), sum.Status, sum.Stash
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
		if c := sum.CurrentPhase; (sum.ReviewIteration > 0 || sum.Lanes > 1) && c >= 0 && c < n {
			// The current phase's review iteration is its lanes'; a phase
			// of several has as many (their other fields unknown here).
			s.Progress.Phases[c].Lanes = make([]state.LaneProgress, max(sum.Lanes, 1))
			for k := range s.Progress.Phases[c].Lanes {
				s.Progress.Phases[c].Lanes[k].Iteration = sum.ReviewIteration
			}
		}
	}
}

// Read decodes info's summary into *sum, its lists cut from sl's (nil:
// each made alone), and reports whether there is one to read: not for a
// run waiting on an interrupt (the question is in the interrupt), nor for
// one whose summary is missing, of another version or not its latest
// checkpoint's.
func Read(info checkpoint.RunInfo, sum *Summary, sl *Slabs) bool {
	if info.Summary == nil || info.Status == graph.StatusInterrupted {
		return false
	}
	return decodeTo(info.Summary, string(info.Summary), sum, sl, false) == nil && sum.Seq == info.Latest
}

// ReadShared is Read whose strings share info.Summary's bytes instead of
// being cut from a copy of them, for a caller that owns those bytes and
// never writes them again: a listing's, which Store.Runs gives bytes of
// their own (checkpoint.Store). Read's copy was a second one of every
// summary, after the store's: 5.4 MB of fresh memory for 10,000 runs,
// whose page faults cost more than the copy.
func ReadShared(info checkpoint.RunInfo, sum *Summary, sl *Slabs) bool {
	if info.Summary == nil || info.Status == graph.StatusInterrupted {
		return false
	}
	b := info.Summary
	s := unsafe.String(unsafe.SliceData(b), len(b))
	return decodeTo(b, s, sum, sl, false) == nil && sum.Seq == info.Latest
}

// ReadHead is Read of a summary's head alone: what choosing a run among
// many reads (its creation, status and pending stash). Of *sum it sets
// Seq, CreatedAt, Status, Mode, CurrentPhase, ReviewIteration,
// PlanRevision, Stash and Lanes; the strings and lists stay empty, and
// nothing is allocated for them (the choice of "the newest run" of
// 10,000 made a copy of every summary, every phase list and every cost
// map, as list does). It reads the same summaries Read reads: the whole
// record is checked.
func ReadHead(info checkpoint.RunInfo, sum *Summary) bool {
	if info.Summary == nil || info.Status == graph.StatusInterrupted {
		return false
	}
	return decodeTo(info.Summary, "", sum, nil, true) == nil && sum.Seq == info.Latest
}

// Slabs hold the lists of a listing's snapshots (10,000 runs, each with a
// few phases and an error): each list is cut from a slab that serves many
// runs, rather than allocated on its own. Its zero value is ready; a nil
// *Slabs allocates each list.
type Slabs struct {
	phases      []state.Phase
	phaseStates []state.PhaseState
	strs        []string
	sums        []Phase
	usage       []RoleUsage
}

func (sl *Slabs) phaseList() *[]state.Phase {
	if sl == nil {
		return nil
	}
	return &sl.phases
}

func (sl *Slabs) phaseStateList() *[]state.PhaseState {
	if sl == nil {
		return nil
	}
	return &sl.phaseStates
}

func (sl *Slabs) stringList() *[]string {
	if sl == nil {
		return nil
	}
	return &sl.strs
}

func (sl *Slabs) phaseSummaries() *[]Phase {
	if sl == nil {
		return nil
	}
	return &sl.sums
}

func (sl *Slabs) usageList() *[]RoleUsage {
	if sl == nil {
		return nil
	}
	return &sl.usage
}

// slabLen is how many entries a slab is made with, at the least.
const slabLen = 512

// carve returns the next n entries of *slab, a new slab when it has fewer
// left; with no slab (a nil *Slabs), a list of its own of n entries, not
// a slab of slabLen (a run read alone, as FromRecord reads one, made
// 234 KB of slabs for its few lists). Its capacity is n: an append to it
// does not reach the next list.
func carve[T any](slab *[]T, n int) []T {
	if slab == nil {
		return make([]T, n)
	}
	if len(*slab) < n {
		*slab = make([]T, max(n, slabLen))
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

// Listed is snap as a listing (and the choice of "the newest run") sees
// it: through the summary its checkpoint carries. ok is false for a
// snapshot that a listing reads whole: a run waiting on an interrupt.
func Listed(snap graph.Snapshot[state.ExecutionState]) (listed graph.Snapshot[state.ExecutionState], ok bool, err error) {
	sum, err := Summarize(snap)
	if err != nil {
		return snap, false, err
	}
	status := snap.Status
	if snap.Interrupt != nil {
		status = graph.StatusInterrupted
	}
	listed, ok = FromRecord(checkpoint.RunInfo{RunID: snap.RunID, Latest: snap.Seq, Status: status, Time: snap.Time, Summary: sum})
	if !ok {
		return snap, false, nil
	}
	return listed, true, nil
}
