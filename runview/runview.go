package runview

import (
	"fmt"
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
	// Lanes are the phase's lanes once it has started (state.LaneProgress):
	// the tasks each session does, at once with the others'.
	Lanes []Lane `json:"lanes,omitempty"`
}

// Lane is one lane of a Phase: a session's tasks, its status (pending,
// running, done, failed), attempt, time, cost and last error.
type Lane struct {
	Number          int         `json:"number"`
	Tasks           []string    `json:"tasks"`
	Title           string      `json:"title,omitempty"` // its task's title, for a lane of one task
	Status          string      `json:"status"`
	Attempt         int         `json:"attempt"`
	DurationSeconds float64     `json:"duration_seconds"` // so far, while it runs
	Usage           state.Usage `json:"usage"`
	Error           string      `json:"error,omitempty"`
	Stopped         bool        `json:"stopped,omitempty"` // running when the run stopped
}

// Mark is the lane's mark: the tree's marks for its status.
func (l Lane) Mark() string {
	switch {
	case l.Stopped:
		return MarkStopped
	case l.Status == state.LaneDone.String():
		return MarkDone
	case l.Status == state.LaneRunning.String():
		return MarkRunning
	case l.Status == state.LaneFailed.String():
		return MarkFailed
	}
	return MarkPending
}

// LanesLine draws a phase of several lanes on one line, as seed 002's
// dashboard does: "✓ 1 Write model tests · ● 2 Write API tests (running
// 40s)"; a lane that failed says why, clipped. "" for a phase of one lane.
func (p Phase) LanesLine() string {
	if len(p.Lanes) < 2 {
		return ""
	}
	parts := make([]string, len(p.Lanes))
	for i, l := range p.Lanes {
		b := l.Mark() + " " + strings.Join(l.Tasks, "+")
		if l.Title != "" {
			b += " " + l.Title
		}
		var notes []string
		d := (time.Duration(l.DurationSeconds) * time.Second).String()
		switch {
		case l.Stopped:
			notes = append(notes, "stopped")
		case l.Status == state.LaneRunning.String() && l.DurationSeconds > 0:
			notes = append(notes, "running "+d)
		case l.Status == state.LaneDone.String() && l.DurationSeconds > 0:
			notes = append(notes, d)
		}
		if l.Attempt > 1 {
			notes = append(notes, fmt.Sprintf("attempt %d", l.Attempt))
		}
		if l.Error != "" {
			e, _ := render.Clip(strings.Join(strings.Fields(l.Error), " "), laneErrorBytes)
			notes = append(notes, "failed: "+e)
		}
		if len(notes) > 0 {
			b += " (" + strings.Join(notes, ", ") + ")"
		}
		parts[i] = b
	}
	return strings.Join(parts, " · ")
}

// laneErrorBytes bounds a lane's error on its line.
const laneErrorBytes = 120

// lanesOf is the view of phase ps's lanes at now (see Of).
func lanesOf(s state.ExecutionState, ps state.PhaseState, now time.Time) []Lane {
	var out []Lane
	for k, l := range ps.Lanes {
		if len(l.Tasks) == 0 {
			continue // a listing's stand-in for the phase's review iteration, not a lane
		}
		v := Lane{Number: k + 1, Tasks: l.Tasks, Status: l.Status.String(), Attempt: l.Attempt, Usage: l.Usage, Error: l.Error}
		if len(l.Tasks) == 1 {
			t, _ := s.Plan.Task(l.Tasks[0])
			v.Title = t.Title
		}
		if !l.StartedAt.IsZero() {
			end := l.CompletedAt
			if end.IsZero() || l.Status == state.LaneRunning {
				end = now
			}
			if d := end.Sub(l.StartedAt).Round(time.Second); !end.IsZero() && d > 0 {
				v.DurationSeconds = d.Seconds()
			}
		}
		out = append(out, v)
	}
	return out
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
	p.Lanes = slices.Clone(p.Lanes)
	for i := range p.Lanes {
		p.Lanes[i].Stopped = p.Lanes[i].Status == state.LaneRunning.String()
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
		wp.Lanes = lanesOf(s, ps, now)
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
	MarkSkipped = "↷" // recovery skipped it, with the human's approval
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
	case state.PhaseSkipped:
		return MarkSkipped
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
