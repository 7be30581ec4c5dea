package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// NewRun returns the state of a run that starts now: run holds the id,
// goal, tracker id and creation time (the caller's clock and id source, so
// the engine stays deterministic); the slug and execution directory are
// derived from them here, once, if run leaves them empty (with
// Slugify and ExecDir, the date being CreatedAt's UTC
// date and, without a tracker id, RunSuffix(ID) taking its place). cfg is
// validated and stored with its defaults filled in.
func NewRun(run RunInfo, cfg RunConfig) (ExecutionState, error) {
	cfg, err := cfg.Validate()
	if err != nil {
		return ExecutionState{}, err
	}
	if run.ID == "" {
		return ExecutionState{}, fmt.Errorf("%w: empty run id", ErrInvalidConfig)
	}
	if run.CreatedAt.IsZero() {
		return ExecutionState{}, fmt.Errorf("%w: run %s has no creation time", ErrInvalidConfig, run.ID)
	}
	run.CreatedAt = run.CreatedAt.UTC()
	if run.Slug == "" {
		run.Slug = Slugify(run.Goal)
	}
	if run.ExecDir == "" {
		id := run.TrackerID
		if id == "" {
			id = RunSuffix(run.ID)
		}
		run.ExecDir = ExecDir(run.CreatedAt.Format(time.DateOnly), id, run.Slug)
	}
	return ExecutionState{Run: run, Config: cfg.Clone(), Status: RunRunning}, nil
}

// RunSuffix is the part of a run id that tells it apart from the runs of
// the same day: the id without the "r-" prefix and the "YYYYMMDD-" date
// the CLI's ids start with ("r-20261123-3b71eb" → "3b71eb"); other ids
// lose only the prefix ("r-test-1" → "test-1"). NewRun puts it in the
// execution directory's name in place of a missing tracker id, so two
// runs of one goal on one day do not share a directory.
func RunSuffix(id string) string {
	s := strings.TrimPrefix(id, "r-")
	if len(s) > 9 && s[8] == '-' && strings.Trim(s[:8], "0123456789") == "" {
		s = s[9:]
	}
	if s == "" {
		return id
	}
	return s
}

// Clone returns a deep copy of s: no slice, map or pointer is shared, so
// the copy can be changed freely, in place too. It costs as much as the
// plan and the progress are big; a transition that only assigns fields
// does not need it (see ExecutionState on sharing).
func (s ExecutionState) Clone() ExecutionState {
	s.Config = s.Config.Clone()
	s.Plan = s.Plan.Clone()
	s.Progress = s.Progress.Clone()
	s.Usage = maps.Clone(s.Usage)
	s.Errors = slices.Clone(s.Errors)
	s.Stash.Overlap = slices.Clone(s.Stash.Overlap)
	s.Outbox.Entries = slices.Clone(s.Outbox.Entries)
	return s
}

// Clone returns a deep copy of c.
func (c RunConfig) Clone() RunConfig {
	if c.Recovery != nil {
		r := *c.Recovery
		r.Fatal = slices.Clone(r.Fatal)
		r.RecoveryTuning = r.RecoveryTuning.Clone()
		r.RecoveryRules = r.RecoveryRules.Clone()
		c.Recovery = &r
	}
	if c.Notify != nil {
		n := *c.Notify
		n.Events = slices.Clone(n.Events)
		n.Targets = slices.Clone(n.Targets)
		for i := range n.Targets {
			n.Targets[i].Run = slices.Clone(n.Targets[i].Run)
		}
		c.Notify = &n
	}
	d := &c.Drivers
	d.Prices = maps.Clone(d.Prices)
	if d.CLIAgents != nil {
		agents := make(map[string]CLIAgent, len(d.CLIAgents))
		for k, a := range d.CLIAgents {
			a.Command, a.ResumeCommand = slices.Clone(a.Command), slices.Clone(a.ResumeCommand)
			a.Env, a.PassEnv, a.Writable = maps.Clone(a.Env), slices.Clone(a.PassEnv), slices.Clone(a.Writable)
			agents[k] = a
		}
		d.CLIAgents = agents
	}
	return c
}

// Clone returns a deep copy of p.
func (p Plan) Clone() Plan {
	if p.Tasks != nil {
		tasks := make([]Task, len(p.Tasks))
		for i, t := range p.Tasks {
			tasks[i] = t.Clone()
		}
		p.Tasks = tasks
	}
	if p.Phases != nil {
		phases := make([]Phase, len(p.Phases))
		for i, ph := range p.Phases {
			phases[i] = Phase{Index: ph.Index, TaskIDs: slices.Clone(ph.TaskIDs)}
		}
		p.Phases = phases
	}
	return p
}

// Clone returns a deep copy of t.
func (t Task) Clone() Task {
	t.DependsOn = slices.Clone(t.DependsOn)
	t.Files = slices.Clone(t.Files)
	return t
}

// Clone returns a deep copy of p.
func (p Progress) Clone() Progress {
	if p.Phases != nil {
		phases := make([]PhaseState, len(p.Phases))
		for i, ps := range p.Phases {
			phases[i] = ps.Clone()
		}
		p.Phases = phases
	}
	p.Recovery = slices.Clone(p.Recovery)
	return p
}

// Clone returns a deep copy of p.
func (p PhaseState) Clone() PhaseState {
	p.Untracked = slices.Clone(p.Untracked)
	p.Written = maps.Clone(p.Written)
	p.GitSettings = maps.Clone(p.GitSettings)
	p.Tasks = slices.Clone(p.Tasks)
	if p.Lanes != nil {
		lanes := make([]LaneProgress, len(p.Lanes))
		for i, l := range p.Lanes {
			lanes[i] = l.Clone()
		}
		p.Lanes = lanes
	}
	if p.Review != nil {
		r := p.Review.Clone()
		p.Review = &r
	}
	if p.Kept != nil {
		k := *p.Kept
		p.Kept = &k
	}
	return p
}

// Clone returns a deep copy of r.
func (r ReviewResult) Clone() ReviewResult {
	r.Items = slices.Clone(r.Items)
	r.Tasks = slices.Clone(r.Tasks)
	return r
}

// WithPlan returns s with plan as its plan and the progress started over:
// one pending PhaseState per phase (with a pending TaskState per task),
// none started. The plan
// revision count and everything else are kept.
func (s ExecutionState) WithPlan(plan Plan) ExecutionState {
	c := s
	c.Plan = plan.Clone()
	phases := make([]PhaseState, len(plan.Phases))
	for i, ph := range plan.Phases {
		tasks := make([]TaskState, len(ph.TaskIDs))
		for j, id := range ph.TaskIDs {
			tasks[j] = TaskState{TaskID: id}
		}
		phases[i] = PhaseState{Index: i, Tasks: tasks}
	}
	// The story's records so far (the human's feedback on an earlier
	// plan) stay counted: they are the run's, not the plan's.
	c.Progress = Progress{Phases: phases, PlanRevision: s.Progress.PlanRevision, Story: s.Progress.Story}
	return c
}

// WithPlanRevision returns s with the plan revision count one higher and
// the human's earlier answer cleared: a revised plan needs a new one.
func (s ExecutionState) WithPlanRevision() ExecutionState {
	c := s
	c.Progress.PlanRevision++
	c.Approval = Approval{}
	return c
}

// WithStatus returns s with the run status set to st.
func (s ExecutionState) WithStatus(st RunStatus) ExecutionState {
	c := s
	c.Status = st
	return c
}

// WithError returns s with msg appended to its errors.
func (s ExecutionState) WithError(msg string) ExecutionState {
	c := s
	c.Errors = append(slices.Clip(s.Errors), msg) // a new array: s's is shared
	return c
}

// WithApproval returns s with the human's answer set to a.
func (s ExecutionState) WithApproval(a Approval) ExecutionState {
	c := s
	c.Approval = a
	return c
}

// WithUsage returns s with u added to the usage of role.
func (s ExecutionState) WithUsage(role string, u Usage) ExecutionState {
	c := s
	c.Usage = make(map[string]Usage, len(s.Usage)+1) // s's map is shared
	maps.Copy(c.Usage, s.Usage)
	c.Usage[role] = s.Usage[role].Add(u)
	return c
}

// TotalUsage returns the usage of every role added up, in role order so
// the cost sums the same way every time.
func (s ExecutionState) TotalUsage() Usage { return TotalOf(s.Usage) }

// TotalOf adds up usage by role, in the roles' order (so that the float
// sum of the costs is the same every time).
func TotalOf(usage map[string]Usage) Usage {
	var total Usage
	if len(usage) == 1 {
		for _, u := range usage {
			return total.Add(u)
		}
	}
	var buf [8]string // a listing totals 10,000 runs: no allocation for a few roles
	roles := buf[:0]
	for role := range usage {
		roles = append(roles, role)
	}
	slices.Sort(roles)
	for _, role := range roles {
		total = total.Add(usage[role])
	}
	return total
}

// WithPhaseState returns s with the state of phase ps.Index replaced by
// ps, or ErrNoPhase when the plan has no such phase.
func (s ExecutionState) WithPhaseState(ps PhaseState) (ExecutionState, error) {
	if ps.Index < 0 || ps.Index >= len(s.Progress.Phases) {
		return ExecutionState{}, fmt.Errorf("%w: index %d of %d", ErrNoPhase, ps.Index, len(s.Progress.Phases))
	}
	c := s
	// A new list of the phases' states, the others' contents shared.
	c.Progress.Phases = slices.Clone(s.Progress.Phases)
	c.Progress.Phases[ps.Index] = ps.Clone()
	return c, nil
}

// PhaseState returns a copy of the state of phase i, or ErrNoPhase.
func (s ExecutionState) PhaseState(i int) (PhaseState, error) {
	if i < 0 || i >= len(s.Progress.Phases) {
		return PhaseState{}, fmt.Errorf("%w: index %d of %d", ErrNoPhase, i, len(s.Progress.Phases))
	}
	return s.Progress.Phases[i].Clone(), nil
}

// LastPhase reports whether the current phase is the plan's last one (or
// past it).
func (s ExecutionState) LastPhase() bool {
	return s.Progress.CurrentPhase() >= len(s.Plan.Phases)-1
}
