package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// A phase's tasks run in lanes: each lane is a fresh agent session with
// its own tasks, and the lanes of a phase run at once, up to the run's
// RunConfig.Parallel. PhaseState.Lanes keeps each lane's progress, as
// raft's tracker keeps a Progress per peer: the run has no cursor of its
// own, and where it is (CurrentPhase, ReviewIteration, the session to
// continue) is read from the lanes.

// LaneStatus is the status of one lane of a phase.
type LaneStatus int

// The statuses of a lane. The zero value is LanePending.
const (
	LanePending LaneStatus = iota // due to run: not started, or to run again (a retry, a conflict, a review iteration)
	LaneRunning                   // its session is under way
	LaneDone                      // its session finished: its work is at Head (a lane in its own work tree) or in the run's tree
	LaneFailed                    // its agent reported failure (LaneProgress.Error)
)

func laneStatusNames() []string { return []string{"pending", "running", "done", "failed"} }

// String returns the status's name, such as "running".
func (s LaneStatus) String() string { return enumString(laneStatusNames(), int(s), "LaneStatus") }

// MarshalText encodes the status as its name.
func (s LaneStatus) MarshalText() ([]byte, error) {
	return enumMarshal(laneStatusNames(), int(s), "lane status")
}

// UnmarshalText decodes a status name; an unknown name is an error.
func (s *LaneStatus) UnmarshalText(b []byte) error {
	return enumUnmarshal(laneStatusNames(), b, "lane status", (*int)(s))
}

// LaneProgress is the progress of one lane of a phase: the tasks one
// agent session does, in order.
type LaneProgress struct {
	Tasks  []string   `json:"tasks"` // the lane's task ids, in the phase's order
	Status LaneStatus `json:"status"`
	// Attempt counts the lane's fresh sessions: 1 for the first; 0 before
	// it starts. A retry of the phase that runs the lane again, or a
	// conflict that re-runs it on the other lanes' work, adds one.
	Attempt int `json:"attempt"`
	// Iteration counts the reviews of the lane's current session: a task
	// mode review that rejects the work continues the same session
	// (SessionID), one iteration higher.
	Iteration int `json:"iteration,omitempty"`
	// SessionID is the agent session to continue; "" when the lane's next
	// session must be fresh. It is recorded once the session finished.
	SessionID string `json:"session_id,omitempty"`
	// WorkTree is the lane's own work tree (absolute), made from Base
	// before its session starts; "" for a lane that works in the run's
	// tree (a phase of one lane).
	WorkTree string `json:"work_tree,omitempty"`
	// Base is the commit the lane's session starts from: the phase's
	// pre-phase commit, or for a lane re-run after a conflict the other
	// lanes' combined work.
	Base string `json:"base,omitempty"`
	// Head is the commit of the lane's work on Base, once it is done (a
	// lane in its own work tree); "" before.
	Head string `json:"head,omitempty"`
	// Usage is the tokens and cost of the lane's sessions, all attempts.
	Usage Usage `json:"usage,omitzero"`
	// Spent is the usage of the lane's latest session alone: the run's
	// totals take it when the lane's result joins the run's state.
	Spent Usage `json:"spent,omitzero"`
	// Error is why the lane's latest session failed: the agent's report,
	// or a conflict of its work with the other lanes'; "" when it did not.
	Error string `json:"error,omitempty"`
	// Conflict lists the paths where the lane's work conflicted with the
	// other lanes' combined work; the lane runs again on top of that work,
	// with the paths named in its prompt.
	Conflict    []string  `json:"conflict,omitempty"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// Record is the decision record (story.Record, JSON) of the lane's
	// latest session, held until the phase's lanes are combined: the
	// records of lanes that ran at once are numbered then, in lane order.
	Record json.RawMessage `json:"record,omitempty"`
	// Expansions is how many times the lane's latest session expanded an
	// earlier phase's records; the run's count takes it when the lane's
	// result joins the run's state, as its usage does.
	Expansions int `json:"expansions,omitempty"`
}

// Clone returns a deep copy of l.
func (l LaneProgress) Clone() LaneProgress {
	l.Tasks = slices.Clone(l.Tasks)
	l.Conflict = slices.Clone(l.Conflict)
	l.Record = slices.Clone(l.Record)
	return l
}

// Equal reports whether l and o are the same lane progress, field by
// field: what encodes to the same JSON. It allocates nothing.
func (l LaneProgress) Equal(o LaneProgress) bool {
	return sameStrings(l.Tasks, o.Tasks) && l.Status == o.Status && l.Attempt == o.Attempt &&
		l.Iteration == o.Iteration && l.SessionID == o.SessionID && l.WorkTree == o.WorkTree &&
		l.Base == o.Base && l.Head == o.Head && l.Usage == o.Usage && l.Spent == o.Spent &&
		l.Error == o.Error && sameStrings(l.Conflict, o.Conflict) &&
		l.StartedAt == o.StartedAt && l.CompletedAt == o.CompletedAt && bytes.Equal(l.Record, o.Record) &&
		l.Expansions == o.Expansions
}

// Label names the lane by its tasks: "1" or "2a+2b".
func (l LaneProgress) Label() string { return strings.Join(l.Tasks, "+") }

// Fresh returns l due to run again in a fresh session from base: its
// attempt one higher, no session, work tree or head, no error.
func (l LaneProgress) Fresh(base string) LaneProgress {
	l = l.Clone()
	l.Status, l.Attempt, l.Iteration = LanePending, l.Attempt+1, 0
	l.SessionID, l.WorkTree, l.Base, l.Head, l.Error, l.Conflict, l.Record = "", "", base, "", "", nil, nil
	l.Expansions = 0
	l.StartedAt, l.CompletedAt = time.Time{}, time.Time{}
	return l
}

// Again returns l due to run again from base, its session continued: its
// attempt one higher, no work tree or head, no error; its session id and
// review iteration kept. A lane runs again so after a conflict (base is
// the other lanes' combined work) or a rejected review (base is its own
// last work).
func (l LaneProgress) Again(base string) LaneProgress {
	l = l.Clone()
	l.Status, l.Attempt = LanePending, l.Attempt+1
	l.WorkTree, l.Base, l.Head, l.Error, l.Conflict, l.Record = "", base, "", "", nil, nil
	l.Expansions = 0
	l.StartedAt, l.CompletedAt = time.Time{}, time.Time{}
	return l
}

// DefaultParallel is how many lanes of a phase run at once when the
// profile does not say (RunConfig.Parallel 0). See docs/configuration.md
// for why 4.
const DefaultParallel = 4

// MaxParallel bounds RunConfig.Parallel.
const MaxParallel = 64

// ParallelOf is how many lanes of a phase run at once for a run started
// with cfg: its Parallel, or DefaultParallel for 0 (a run stored before
// lanes existed).
func ParallelOf(cfg RunConfig) int {
	if cfg.Parallel <= 0 {
		return DefaultParallel
	}
	return cfg.Parallel
}

// GroupLanes groups the tasks of one phase into lanes, pure and
// deterministic: tasks whose declared files overlap (the same path, or
// one a directory holding the other) share a lane, and so do all the
// tasks that declare none (they may touch anything). A lane's tasks keep
// the order they are given in, and lanes are ordered by their first
// task. Tasks in task mode come one per phase: one lane.
func GroupLanes(tasks []Task) [][]string {
	n := len(tasks)
	if n == 0 {
		return nil
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb) // the root is the earliest task
		}
	}
	none := -1
	for i, t := range tasks {
		if len(t.Files) == 0 {
			if none < 0 {
				none = i
			} else {
				union(none, i)
			}
			continue
		}
		for j := range i {
			if len(tasks[j].Files) > 0 && filesOverlap(t.Files, tasks[j].Files) {
				union(i, j)
			}
		}
	}
	var lanes [][]string
	at := map[int]int{} // root → index in lanes
	for i, t := range tasks {
		r := find(i)
		k, ok := at[r]
		if !ok {
			k = len(lanes)
			at[r] = k
			lanes = append(lanes, nil)
		}
		lanes[k] = append(lanes[k], t.ID)
	}
	return lanes
}

// filesOverlap reports whether two lists of declared files share a path,
// or one names a directory that holds a path of the other.
func filesOverlap(a, b []string) bool {
	for _, p := range a {
		for _, q := range b {
			if pathsOverlap(p, q) {
				return true
			}
		}
	}
	return false
}

func pathsOverlap(p, q string) bool {
	p, q = cleanDeclared(p), cleanDeclared(q)
	if p == "" || q == "" || p == q {
		return true // "." or "/": the whole tree
	}
	return strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/")
}

// cleanDeclared is a declared file as a clean slash path ("" for the
// whole tree).
func cleanDeclared(p string) string {
	p = path.Clean(strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(p), "\\", "/"), "./"))
	if p == "." || p == "/" {
		return ""
	}
	return strings.TrimPrefix(p, "/")
}

// PhaseLanes groups phase i's tasks into lanes (GroupLanes); nil for a
// phase the plan does not have.
func (p Plan) PhaseLanes(i int) [][]string {
	tasks, err := p.PhaseTasks(i)
	if err != nil {
		return nil
	}
	return GroupLanes(tasks)
}

// LanesLine shows phase i's lanes: "Phase 1 (3 lanes): 1, 2 | 3" — the
// lanes separated by "|", each lane's tasks by ",".
func (p Plan) LanesLine(i int) string {
	lanes := p.PhaseLanes(i)
	parts := make([]string, len(lanes))
	for k, l := range lanes {
		parts[k] = strings.Join(l, ", ")
	}
	word := "lanes"
	if len(lanes) == 1 {
		word = "lane"
	}
	return fmt.Sprintf("Phase %d (%d %s): %s", i+1, len(lanes), word, strings.Join(parts, " | "))
}

// NewLanes returns pending lanes for groups (from GroupLanes), each to
// start at base with its first attempt.
func NewLanes(groups [][]string, base string) []LaneProgress {
	lanes := make([]LaneProgress, len(groups))
	for k, g := range groups {
		lanes[k] = LaneProgress{Tasks: slices.Clone(g), Status: LanePending, Attempt: 1, Base: base}
	}
	return lanes
}

// CurrentPhase is the index into Plan.Phases (and Phases) of the phase
// being worked on: the last one that has started, 0 before any has.
// Phases start in order and never go back to pending, so this is where
// the run is; once every phase is done it is the last one.
func (p Progress) CurrentPhase() int {
	for i := len(p.Phases) - 1; i >= 0; i-- {
		if ps := &p.Phases[i]; ps.Attempt > 0 || ps.Status != PhasePending {
			return i
		}
	}
	return 0
}

// ReviewIteration counts the reviews of the current attempt of phase
// ps: the most any of its lanes' sessions went through.
func (ps PhaseState) ReviewIteration() int {
	n := 0
	for i := range ps.Lanes {
		n = max(n, ps.Lanes[i].Iteration)
	}
	return n
}

// ReviewIteration is the current phase's (see PhaseState.ReviewIteration);
// 0 before a phase starts.
func (s ExecutionState) ReviewIteration() int {
	i := s.Progress.CurrentPhase()
	if i >= len(s.Progress.Phases) {
		return 0
	}
	return s.Progress.Phases[i].ReviewIteration()
}

// Parallel reports whether phase ps runs its lanes in their own work
// trees, to be combined: it has more than one lane.
func (ps PhaseState) Parallel() bool { return len(ps.Lanes) > 1 }

// WithIteration returns ps with every lane's review iteration set to n.
// ps's lanes are copied, not changed.
func (ps PhaseState) WithIteration(n int) PhaseState {
	ps.Lanes = slices.Clone(ps.Lanes)
	for i := range ps.Lanes {
		ps.Lanes[i].Iteration = n
	}
	return ps
}

// FreshLanes returns ps with every lane due again from the pre-phase
// commit in a fresh session, at the phase's attempt: a new attempt of
// the phase (count ps.Attempt up first), or its work lost with another
// host's tree. ps's lanes are copied, not changed.
func (ps PhaseState) FreshLanes() PhaseState {
	lanes := make([]LaneProgress, len(ps.Lanes))
	for i, l := range ps.Lanes {
		lanes[i] = l.Fresh(ps.PreCommit)
		lanes[i].Attempt = ps.Attempt
	}
	ps.Lanes = lanes
	return ps
}

// RedoLanes returns ps for a new attempt of the phase (count ps.Attempt
// up first) that runs again only the lanes redo picks: each is due from
// the pre-phase commit in a fresh session, its own attempt one higher.
// A lane that is done keeps its work (Head, the commit its ref keeps),
// its session and its result, and does not run. Some lanes are redone
// whatever redo says: one that is not done with its work at Head, and
// one built on the other lanes' combined work (a lane run again after a
// conflict: Base is not the pre-phase commit), which may hold a redone
// lane's old work. A phase of one lane, and one where no lane is picked,
// has every lane fresh (FreshLanes). ps's lanes are copied, not changed.
func (ps PhaseState) RedoLanes(redo func(LaneProgress) bool) PhaseState {
	if !ps.Parallel() || !slices.ContainsFunc(ps.Lanes, redo) {
		return ps.FreshLanes()
	}
	lanes := make([]LaneProgress, len(ps.Lanes))
	for i, l := range ps.Lanes {
		if l.Status == LaneDone && l.Head != "" && l.Base == ps.PreCommit && !redo(l) {
			lanes[i] = l.Clone()
			continue
		}
		lanes[i] = l.Fresh(ps.PreCommit)
	}
	ps.Lanes = lanes
	return ps
}

// WithoutSessions returns ps with no session to continue in any lane: the
// next sessions are fresh. ps's lanes are copied, not changed.
func (ps PhaseState) WithoutSessions() PhaseState {
	ps.Lanes = slices.Clone(ps.Lanes)
	for i := range ps.Lanes {
		ps.Lanes[i].SessionID = ""
	}
	return ps
}

// HasSession reports whether a lane of ps has a session to continue.
func (ps PhaseState) HasSession() bool {
	for i := range ps.Lanes {
		if ps.Lanes[i].SessionID != "" {
			return true
		}
	}
	return false
}

// WithPreCommit returns ps with commit as its pre-phase commit, and as the
// base of each lane that stood on the old one (a fork's phase in progress
// starts again on the fork's own commit). ps's lanes are copied.
func (ps PhaseState) WithPreCommit(commit string) PhaseState {
	ps.Lanes = slices.Clone(ps.Lanes)
	for i := range ps.Lanes {
		if ps.Lanes[i].Base == ps.PreCommit {
			ps.Lanes[i].Base = commit
		}
	}
	ps.PreCommit = commit
	return ps
}

// InClone reports whether ps's progress relies on work that is only in
// the run's clone: a lane's session to continue, or lanes at work in
// trees of their own, whose commits only the clone's refs keep. A host
// that takes the run over in a new clone runs such a phase again
// (nodes.RedoPhase).
func (ps PhaseState) InClone() bool {
	for i := range ps.Lanes {
		if l := &ps.Lanes[i]; l.SessionID != "" || l.WorkTree != "" || l.Head != "" {
			return true
		}
	}
	return false
}

// LaneUsage adds up the usage of ps's lanes, in lane order.
func (ps PhaseState) LaneUsage() Usage {
	var u Usage
	for i := range ps.Lanes {
		u = u.Add(ps.Lanes[i].Usage)
	}
	return u
}
