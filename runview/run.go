package runview

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// Run is a run's whole view, the one every front end renders: its status
// (stopped or queued), phases, cost, the question it waits on, its branch
// and its last error. `status` and `list` print it, `status --json` and
// `list --json` write it, the inbox's pages show it; its Tree is the phase
// tree `status`, `status --watch`, the live view and the inbox draw.
type Run struct {
	RunID   string `json:"run_id"`
	Status  string `json:"status"`
	Goal    string `json:"goal"`
	Mode    string `json:"mode,omitempty"`
	ExecDir string `json:"exec_dir"`
	// Branch and WorkTree are the run's own branch and work tree (the
	// tree is gone once the run has ended); absent for a run in place.
	Branch   string `json:"branch,omitempty"`
	WorkTree string `json:"work_tree,omitempty"`
	// Unmerged is true when Branch holds commits the user's current
	// branch lacks: work `gaffer merge RUN` would take. The front end
	// that has the repository sets it (RunOf leaves it false).
	Unmerged     bool                   `json:"unmerged,omitempty"`
	CreatedAt    time.Time              `json:"created_at"`
	CurrentPhase int                    `json:"current_phase,omitempty"` // 1-based; 0 before the plan is approved
	PlanRevision int                    `json:"plan_revision"`
	Phases       []RunPhase             `json:"phases,omitempty"`
	Errors       []string               `json:"errors,omitempty"`
	Usage        map[string]state.Usage `json:"usage,omitempty"` // by role
	// CostUSD and the token counts are Usage added up over every role:
	// the run's total so far, always present (0 before any agent
	// reported usage). CostUSD is rounded to a millionth of a dollar.
	CostUSD      float64  `json:"cost_usd"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	CachedTokens int      `json:"cached_tokens"`
	Checkpoint   uint64   `json:"checkpoint"`
	Next         []string `json:"next,omitempty"`
	// Stopped is true for a run whose status is running that no process
	// is running (killed, or stopped by an error): resume continues it.
	// LastError is then why it stopped, as the process that ran it kept
	// it, or else the state's last error, if it has one. Interrupted is
	// true when the process kept no reason (Ctrl-C, a kill, a closed
	// terminal). Tree.StoppedAt is when.
	Stopped     bool   `json:"stopped,omitempty"`
	LastError   string `json:"last_error,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// Pending is true for a run serve has queued and not started: the
	// view has its RunID and Status only.
	Pending bool `json:"-"`
	// Deleted is true for a run deleted from the store whose branch was
	// kept for the unmerged work it holds (DeletedRow): the view has its
	// RunID, Status (StatusDeleted), Branch and Unmerged only.
	Deleted bool `json:"deleted,omitempty"`
	// Asks is what the run waits for from a person: AsksApproval,
	// AsksDecision, or "" for nothing. Question is recovery's question,
	// for AsksDecision.
	Asks     string          `json:"-"`
	Question *nodes.Question `json:"question,omitempty"`
	// Plan is the run's whole stored plan (status --json only; list
	// leaves it out); nil before the architect has written one.
	Plan *Plan `json:"plan,omitempty"`
	// Recovery is what recovery did (Doctor calls, replans that answered
	// with a revision and, apart, the replans reserved, escalations, the
	// last decision and why); absent with recovery off or before a phase
	// failed.
	Recovery *nodes.RecoveryView `json:"recovery,omitempty"`
	// Tree is the phase tree at the time RunOf was given.
	Tree Tree `json:"-"`
}

// What a run can wait for from a person (Run.Asks).
const (
	AsksApproval = "plan approval"
	AsksDecision = "a decision on recovery's question"
)

// RunPhase is one phase of a Run.
type RunPhase struct {
	Number     int      `json:"number"`
	Tasks      []string `json:"tasks,omitempty"`
	Status     string   `json:"status"`
	Attempt    int      `json:"attempt"`
	PreCommit  string   `json:"pre_commit,omitempty"`
	PostCommit string   `json:"post_commit,omitempty"`
	// Lanes is how many lanes the phase has while it runs, if several.
	Lanes  int                 `json:"lanes,omitempty"`
	Review *state.ReviewResult `json:"review,omitempty"` // the latest review
	// Rejections are the reviews that rejected an attempt of the phase,
	// oldest first (the last state.MaxRejections), kept once a later
	// review approves.
	Rejections []state.Rejection `json:"rejections,omitempty"`
}

// RunOf is the view of rs at now (the tree's running phases' times, see
// Of). A stopped run's clock stopped at its last checkpoint: its running
// phase shows how long it ran until then, marked stopped.
func RunOf(rs host.RunStatus, now time.Time) Run {
	v := RowOf(rs)
	if rs.Pending {
		v.Tree = Tree{RunID: rs.Snapshot.RunID, Status: rs.Status}
		return v
	}
	var stoppedAt time.Time
	if v.Stopped {
		stoppedAt = rs.Snapshot.Time
		if !now.IsZero() && !stoppedAt.IsZero() {
			now = stoppedAt
		}
	}
	v.Tree = Of(rs.Snapshot.State, host.ViewStatus(rs.Snapshot), now)
	v.Tree.RunID, v.Tree.Checkpoint, v.Tree.Next = rs.Snapshot.RunID, rs.Snapshot.Seq, rs.Snapshot.Next
	v.Tree.Branch, v.Tree.LastError, v.Tree.Stopped, v.Tree.StoppedAt = v.Branch, v.LastError, v.Stopped, stoppedAt
	if v.Stopped {
		for i := range v.Tree.Phases {
			v.Tree.Phases[i].stop()
		}
	}
	return v
}

// RowOf is RunOf without the phase tree (Run.Tree is empty): a row of a
// listing of many runs, list's and list --json's.
func RowOf(rs host.RunStatus) Run {
	if rs.Pending {
		return Run{RunID: rs.Snapshot.RunID, Status: rs.Status, Pending: true}
	}
	// By pointer: a state is 1.4 KB, and a listing makes 10,000 rows.
	snap := &rs.Snapshot
	s := &snap.State
	st := host.ViewStatus(*snap)
	v := Run{RunID: snap.RunID, Status: st.String(), Goal: s.Run.Goal, ExecDir: s.Run.ExecDir,
		CreatedAt: s.Run.CreatedAt, PlanRevision: s.Progress.PlanRevision, Errors: s.Errors, Usage: s.Usage,
		Checkpoint: snap.Seq, Next: snap.Next}
	if s.Run.WorkTree != "" {
		v.Branch, v.WorkTree = host.RunBranch(s.Run.ID), s.Run.WorkTree
	}
	total := state.TotalOf(s.Usage)
	v.CostUSD, v.InputTokens, v.OutputTokens, v.CachedTokens = math.Round(total.CostUSD*1e6)/1e6, total.InputTokens, total.OutputTokens, total.CachedTokens
	if len(s.Progress.Recovery) > 0 {
		if rv, ok := nodes.Recovery(*s); ok {
			v.Recovery = &rv
		}
	}
	if len(s.Plan.Phases) > 0 {
		v.Mode = s.Plan.Mode.String()
		v.CurrentPhase = s.Progress.CurrentPhase() + 1
	}
	if len(s.Plan.Phases) > 0 {
		v.Phases = make([]RunPhase, 0, len(s.Plan.Phases))
	}
	for i, ph := range s.Plan.Phases {
		pv := RunPhase{Number: i + 1, Tasks: ph.TaskIDs, Status: state.PhasePending.String()}
		if i < len(s.Progress.Phases) {
			ps := s.Progress.Phases[i]
			pv.Status, pv.Attempt, pv.PreCommit, pv.PostCommit, pv.Review = ps.Status.String(), ps.Attempt, ps.PreCommit, ps.PostCommit, ps.Review
			pv.Rejections = ps.Rejections
			if n := len(ps.Lanes); n > 1 && ps.Status == state.PhaseRunning {
				pv.Lanes = n
			}
		}
		v.Phases = append(v.Phases, pv)
	}
	if rs.Stopped {
		v.Stopped = true
		v.LastError, v.Interrupted = rs.LastError, rs.LastError == ""
		if n := len(s.Errors); v.LastError == "" && n > 0 {
			v.LastError = s.Errors[n-1]
		}
	}
	if st == state.RunAwaitingApproval && snap.Interrupt != nil {
		v.Asks = AsksApproval
		if snap.Interrupt.Node == nodes.NodeRecover {
			v.Asks = AsksDecision
			var q nodes.Question
			if json.Unmarshal(snap.Interrupt.Payload, &q) == nil {
				v.Question = &q
			}
		}
	}
	return v
}

// RowOfEntry is RowOf of the run e stands for: the same row, made from
// its summary when it was listed through one (TestEntryRowIsTheRow).
func RowOfEntry(e *host.ListEntry) Run {
	v := BriefRowOfEntry(e)
	if e.Whole == nil {
		v.Usage = e.Summary.UsageMap()
	}
	return v
}

// BriefRowOfEntry is RowOfEntry without the usage by role (Usage, nil)
// of a run listed through its summary; the totals are set. list's table
// prints the total alone, and a map per run of 10,000 was a tenth of its
// time.
func BriefRowOfEntry(e *host.ListEntry) Run {
	return briefRow(e, nil)
}

// BriefRowReusing is BriefRowOfEntry whose phases (for a run listed
// through its summary) are cut from *phases, grown as needed: the row's
// Phases are the caller's until its next call with the same list. list's
// table reads each row once; a list of phases made for each of 10,000
// rows was 6 MB of fresh memory.
func BriefRowReusing(e *host.ListEntry, phases *[]RunPhase) Run {
	return briefRow(e, phases)
}

// briefRow is BriefRowOfEntry, its phases cut from *phases unless
// phases is nil.
func briefRow(e *host.ListEntry, phases *[]RunPhase) Run {
	if e.Whole != nil {
		return RowOf(*e.Whole)
	}
	s := e.Summary
	v := Run{RunID: e.RunID, Status: s.Status.String(), Goal: s.Goal, ExecDir: s.ExecDir, CreatedAt: s.CreatedAt,
		PlanRevision: s.PlanRevision, Checkpoint: e.Seq, Next: s.Next}
	if s.LastError != "" {
		v.Errors = []string{s.LastError}
	}
	if s.WorkTree != "" {
		v.Branch, v.WorkTree = host.RunBranch(e.RunID), s.WorkTree
	}
	total := s.TotalUsage()
	v.CostUSD, v.InputTokens, v.OutputTokens, v.CachedTokens = math.Round(total.CostUSD*1e6)/1e6, total.InputTokens, total.OutputTokens, total.CachedTokens
	if len(s.Phases) > 0 {
		v.Mode = s.Mode.String()
		v.CurrentPhase = s.CurrentPhase + 1
		if phases != nil {
			*phases = slices.Grow((*phases)[:0], len(s.Phases))[:len(s.Phases)]
			v.Phases = *phases
		} else {
			v.Phases = make([]RunPhase, len(s.Phases))
		}
		for i, p := range s.Phases {
			v.Phases[i] = RunPhase{Number: i + 1, Status: p.Status.String(), Attempt: p.Attempt, PostCommit: p.Commit}
		}
		if c := s.CurrentPhase; s.Lanes > 1 && c >= 0 && c < len(v.Phases) && s.Phases[c].Status == state.PhaseRunning {
			v.Phases[c].Lanes = s.Lanes
		}
	}
	if e.Stopped {
		v.Stopped, v.Interrupted = true, e.LastError == ""
		v.LastError = cmp.Or(e.LastError, s.LastError)
	}
	return v
}

// StatusDeleted is the status of a DeletedRow.
const StatusDeleted = "deleted"

// DeletedRow is a listing's row of run id, deleted from the store, whose
// branch was kept because it holds work the user's current branch lacks:
// `gaffer merge RUN` still takes that work, `gaffer prune --branches`
// removes it.
func DeletedRow(id, branch string) Run {
	return Run{RunID: id, Status: StatusDeleted, Branch: branch, Unmerged: true, Deleted: true}
}

// Plan is a run's stored plan as `plan show --json` prints it and
// `status --json` carries it ("plan"): everything the human approves.
type Plan struct {
	RunID    string       `json:"run_id"`
	Goal     string       `json:"goal"`
	Revision int          `json:"revision"`
	Mode     string       `json:"mode"`
	Phases   [][]string   `json:"phases"`
	Tasks    []state.Task `json:"tasks"`
	Markdown string       `json:"markdown"` // the plan as written (by the user, or the architect for --goal)
}

// PlanOf returns s's plan, or nil when the architect has not written one
// yet.
func PlanOf(s state.ExecutionState) *Plan {
	if s.Plan.Markdown == "" && len(s.Plan.Tasks) == 0 {
		return nil
	}
	v := &Plan{RunID: s.Run.ID, Goal: s.Run.Goal, Revision: s.Progress.PlanRevision, Mode: s.Plan.Mode.String(),
		Phases: [][]string{}, Tasks: s.Plan.Tasks, Markdown: s.Plan.Markdown}
	if v.Tasks == nil {
		v.Tasks = []state.Task{}
	}
	for _, ph := range s.Plan.Phases {
		v.Phases = append(v.Phases, ph.TaskIDs)
	}
	return v
}

// StopWhere says when and where a stopped run stopped, as far as its last
// checkpoint tells: "at 10:42:05 UTC during phase 2 (attempt 1)", the
// time in zone (with its date when it is not now's day), the phase and its
// attempt ("while the plan was made" before there are phases, "before
// phase 2 started" at a phase not begun). "" for a run not stopped.
func StopWhere(v Run, zone *time.Location, now time.Time) string {
	if !v.Stopped {
		return ""
	}
	when := ""
	if at := v.Tree.StoppedAt; !at.IsZero() {
		at, now = at.In(zone), now.In(zone)
		layout := "15:04:05 MST"
		if y, m, d := at.Date(); y != now.Year() || m != now.Month() || d != now.Day() {
			layout = "2006-01-02 15:04:05 MST"
		}
		when = "at " + at.Format(layout) + " "
	}
	n := v.CurrentPhase
	switch {
	case n < 1 || n > len(v.Phases):
		return when + "while the plan was made"
	case v.Phases[n-1].Attempt < 1:
		return fmt.Sprintf("%sbefore phase %d started", when, n)
	}
	return fmt.Sprintf("%sduring phase %d (attempt %d)", when, n, v.Phases[n-1].Attempt)
}
