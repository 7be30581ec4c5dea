package runview

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/state"
)

// Tree is a run as `status --watch` draws it (and prints it, one JSON
// object per change, with --json): seed 002's phase tree with durations,
// attempts, review iterations and tokens.
type Tree struct {
	RunID           string      `json:"run_id"`
	Status          string      `json:"status"`
	Goal            string      `json:"goal"`
	Slug            string      `json:"slug,omitempty"` // the goal's slug, named when the goal is empty
	Checkpoint      uint64      `json:"checkpoint"`
	Next            []string    `json:"next,omitempty"`
	CurrentPhase    int         `json:"current_phase,omitempty"` // 1-based
	ReviewIteration int         `json:"review_iteration"`        // of the current phase's attempt
	Phases          []Phase     `json:"phases,omitempty"`
	Usage           state.Usage `json:"usage"` // all roles
	Errors          []string    `json:"errors,omitempty"`
	// Branch is the run's own branch, and Stopped and LastError whether
	// no process runs the run and its last error, as Run has them; a
	// stopped run's StoppedAt is the time of its last checkpoint, where
	// its clock stopped and resume goes on. RunOf fills them (status
	// --watch --json shows them), Of leaves them empty.
	Branch    string    `json:"branch,omitempty"`
	Stopped   bool      `json:"stopped,omitempty"`
	StoppedAt time.Time `json:"stopped_at,omitzero"`
	LastError string    `json:"last_error,omitempty"`
}

// Phase is one phase of a Tree.
type Phase struct {
	Number          int     `json:"number"`
	Status          string  `json:"status"`
	Attempt         int     `json:"attempt"`
	DurationSeconds float64 `json:"duration_seconds"` // so far, while it runs; 0 before it starts
	ReviewIteration int     `json:"review_iteration,omitempty"`
	Commit          string  `json:"commit,omitempty"`
	// Stopped is true for a phase that was running when the run stopped
	// (no process runs it): its time is up to the run's last checkpoint,
	// and it is drawn stopped, not running.
	Stopped bool   `json:"stopped,omitempty"`
	Tasks   []Task `json:"tasks"`
}

// Task is one task of a Phase.
type Task struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Type    string `json:"type,omitempty"`
	Status  string `json:"status"`
	Stopped bool   `json:"stopped,omitempty"` // running when the run stopped, as Phase.Stopped
}

// stop marks p, and its tasks, stopped when they were running: the run
// they belong to has no process.
func (p *Phase) stop() {
	if !running(p.Status) {
		return
	}
	p.Stopped = true
	p.Tasks = slices.Clone(p.Tasks)
	for i := range p.Tasks {
		p.Tasks[i].Stopped = running(p.Tasks[i].Status)
	}
}

// running reports whether a phase or task status is one that runs.
func running(status string) bool {
	st, _ := parse(status)
	return st == state.PhaseRunning || st == state.PhaseRetrying
}

// Mark is the phase's mark in the tree: its status's, MarkStopped when
// it was running as the run stopped.
func (p Phase) Mark() string { return markOf(p.Status, p.Stopped) }

// Word is the phase's status as the tree names it: "Completed", or
// "Stopped" for one that was running as the run stopped.
func (p Phase) Word() string { return wordOf(p.Status, p.Stopped) }

// Mark is the task's mark in the tree (as Phase.Mark).
func (t Task) Mark() string { return markOf(t.Status, t.Stopped) }

func markOf(status string, stopped bool) string {
	if stopped {
		return MarkStopped
	}
	return Mark(status)
}

func wordOf(status string, stopped bool) string {
	if stopped {
		return "Stopped"
	}
	return StatusWord(status)
}

// Of is the view of run state s, whose status is st (a run interrupted
// for approval says so only in its checkpoint, see host.ViewStatus), at
// now: a phase that has ended shows how long it took, one that runs how
// long it has run so far. A zero now leaves out the running phases' times
// (a picture that does not change while a phase runs).
func Of(s state.ExecutionState, st state.RunStatus, now time.Time) Tree {
	v := Tree{RunID: s.Run.ID, Status: st.String(), Goal: s.Run.Goal, Slug: s.Run.Slug,
		ReviewIteration: s.ReviewIteration(), Errors: s.Errors, Usage: s.TotalUsage()}
	cur := s.Progress.CurrentPhase()
	if len(s.Plan.Phases) > 0 {
		v.CurrentPhase = cur + 1
	}
	for i, ph := range s.Plan.Phases {
		var ps state.PhaseState
		if i < len(s.Progress.Phases) {
			ps = s.Progress.Phases[i]
		}
		wp := Phase{Number: i + 1, Status: ps.Status.String(), Attempt: ps.Attempt, Commit: render.Short(ps.PostCommit)}
		if !ps.StartedAt.IsZero() {
			end := ps.CompletedAt
			if end.IsZero() {
				end = now
			}
			if d := end.Sub(ps.StartedAt).Round(time.Second); !end.IsZero() && d > 0 {
				wp.DurationSeconds = d.Seconds()
			}
		}
		if i == cur && ps.Status != state.PhaseCompleted {
			wp.ReviewIteration = ps.ReviewIteration()
		}
		for _, tid := range ph.TaskIDs {
			t, _ := s.Plan.Task(tid)
			// A checkpoint without task states (older ones) gives every
			// task its phase's status.
			wt := Task{ID: tid, Title: t.Title, Status: ps.Status.String()}
			if t.Type != state.TypeNone {
				wt.Type = t.Type.String()
			}
			for _, ts := range ps.Tasks {
				if ts.TaskID == tid {
					wt.Status = ts.Status.String()
				}
			}
			wp.Tasks = append(wp.Tasks, wt)
		}
		v.Phases = append(v.Phases, wp)
	}
	return v
}

// Duration is how long the phase took (so far), "" before it started.
func (p Phase) Duration() string {
	if p.DurationSeconds <= 0 {
		return ""
	}
	return (time.Duration(p.DurationSeconds) * time.Second).String()
}

// Kind names the types of the phase's typed tasks: " (test)", or
// " (test+impl)" for a phase that mixes them; "" when none is typed.
func Kind(ts []Task) string {
	var kinds []string
	for _, t := range ts {
		if t.Type != "" && !slices.Contains(kinds, t.Type) {
			kinds = append(kinds, t.Type)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return " (" + strings.Join(kinds, "+") + ")"
}

// Marks of the phase tree.
const (
	MarkDone    = "✓"
	MarkRunning = "●"
	MarkPending = "○"
	MarkFailed  = "✗"
	MarkStopped = "◌" // was running when its run stopped: no process runs it
)

// Mark is the phase tree's mark of a phase or task status (a status
// string that is none: pending's).
func Mark(status string) string {
	st, _ := parse(status)
	switch st {
	case state.PhaseCompleted:
		return MarkDone
	case state.PhaseRunning, state.PhaseRetrying:
		return MarkRunning
	case state.PhaseFailed:
		return MarkFailed
	}
	return MarkPending
}

// StatusWord is a phase or task status as the tree names it: "Completed".
func StatusWord(status string) string {
	st, _ := parse(status)
	w := st.String()
	return strings.ToUpper(w[:1]) + w[1:]
}

func parse(s string) (state.PhaseStatus, error) {
	var st state.PhaseStatus
	err := st.UnmarshalText([]byte(s))
	return st, err
}

// Roles is the order of the roles of a run's usage in a cost table: the
// workflow's, then any other role by name.
func Roles(usage map[string]state.Usage) []string {
	known := []string{string(agent.RoleArchitect), string(agent.RoleDeveloper), string(agent.RoleReviewer),
		string(agent.RoleEvaluator), string(agent.RoleSummarizer)}
	var out []string
	for _, r := range known {
		if _, ok := usage[r]; ok {
			out = append(out, r)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(usage)) {
		if !slices.Contains(known, r) {
			out = append(out, r)
		}
	}
	return out
}
