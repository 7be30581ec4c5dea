package inbox

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// Bounds of what a page shows of a run: a phase's patch and an agent
// session's transcript are cut (the page says so) beyond them.
const (
	maxPatchBytes      = 32 << 10
	maxTranscriptBytes = 16 << 10
	maxSessions        = 40
)

// runItem is a run as the list shows it.
type runItem struct {
	ID      string
	Status  string
	Needs   string // what the run waits for from a person: "plan approval", "an answer to recovery's question"; "" for nothing
	Stopped bool   // running, but no process runs it
	Pending bool   // queued in serve, not started
	Goal    string
	Created string
	Branch  string // the run's own branch (gaffer/RUN); "" for a run in place
	Tree    runview.Tree
	Usage   state.Usage
	view    runview.Run // the whole view the item shows part of
}

// Cost is the run's total cost as the CLI prints it.
func (r runItem) Cost() string { return fmt.Sprintf("$%.4f", r.Usage.CostUSD) }

// itemOf is the list's view of rs at now (runview.RunOf).
func itemOf(rs host.RunStatus, now time.Time) runItem {
	v := runview.RunOf(rs, now)
	it := runItem{ID: v.RunID, Status: rs.Status, Stopped: v.Stopped, Pending: v.Pending, view: v}
	if v.Pending {
		return it
	}
	it.Goal, it.Usage, it.Tree, it.Needs, it.Branch = v.Goal, v.Tree.Usage, v.Tree, v.Asks, v.Branch
	if !v.CreatedAt.IsZero() {
		it.Created = v.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return it
}

// listOf orders runs for the list: those that need a person first, each
// group newest first (the order List gives).
func listOf(rs []host.RunStatus, now time.Time) []runItem {
	items := make([]runItem, 0, len(rs))
	for _, r := range rs {
		items = append(items, itemOf(r, now))
	}
	slices.SortStableFunc(items, func(a, b runItem) int {
		switch {
		case a.Needs != "" && b.Needs == "":
			return -1
		case a.Needs == "" && b.Needs != "":
			return 1
		}
		return 0
	})
	return items
}

// runPage is one run's page.
type runPage struct {
	runItem
	ExecDir string
	// Plan is the plan as written (its preamble for a plan without),
	// rendered from Markdown; PlanRevision its revision. Tasks' own
	// descriptions are shown on the phase cards only when the plan has
	// no Markdown (TaskDetail): the plan is shown once.
	Plan         template.HTML
	PlanRevision int
	TaskDetail   bool
	// Merge is the command that takes a finished run's branch into the
	// user's branch (all of a completed run's work, the approved phases of
	// one halted, failed or cancelled); "" for a run not finished, run in
	// place, or whose work the user's branch has (Merged).
	Merge    string
	Merged   bool
	Phases   []phaseView
	Errors   []string // the run's errors but the one LastError shows
	Question *nodes.Question
	Recovery *nodes.RecoveryView
	Roles    []roleUsage
	Sessions []session
	CSRF     string
	Said     string // what the last answer did, from a fixed set
	SaidKey  string // its key (?said=), kept by the live updates
	// LastError is what stopped or ended the run, at the top of its page;
	// Interrupted says that a stopped run kept no reason (a signal, a
	// kill: LastError is then its state's last error, if any), StopWhere
	// when and where it stopped, and Resume the command that continues it.
	LastError   string
	Interrupted bool
	StopWhere   string
	Resume      string
}

// Label is the run's status as the page names it: awaiting_decision for
// a run waiting on recovery's question (its status is awaiting_approval,
// but no plan is to approve), the status otherwise.
func (r runItem) Label() string {
	if r.Needs == runview.AsksDecision {
		return "awaiting_decision"
	}
	return r.Status
}

// phaseView is one phase of the run page: its tree line, tasks in full,
// diff and review.
type phaseView struct {
	runview.Phase
	Kind  string
	Tasks []taskView
	Error string
	// Reviews are the phase's reviews worth showing on its card: those
	// that rejected an attempt, oldest first, then the latest when it
	// approved (or when the state kept no rejection).
	Reviews   []reviewView
	DiffRange string // "abc1234..def5678"
	Files     []diffFile
	PatchCut  bool
	DiffError string
}

// reviewView is a review on a phase card.
type reviewView struct {
	state.ReviewResult
	Attempt, Iteration int // 0 when unknown (the latest review)
}

// reviewsOf is ps's reviews for its card (phaseView.Reviews).
func reviewsOf(ps state.PhaseState) []reviewView {
	var rs []reviewView
	for _, r := range ps.Rejections {
		rs = append(rs, reviewView{ReviewResult: r.Review, Attempt: r.Attempt, Iteration: r.Iteration})
	}
	if r := ps.Review; r != nil && (r.Approved || len(rs) == 0) {
		rs = append(rs, reviewView{ReviewResult: *r})
	}
	return rs
}

// taskView is a task of the plan with its tree status.
type taskView struct {
	runview.Task
	Description string
	Files       []string
	DependsOn   []string
}

// fileStat is a changed file of a phase's diff stat.
type fileStat struct {
	Path           string
	Added, Deleted int
	Binary         bool
}

// roleUsage is a row of the cost table.
type roleUsage struct {
	Role string
	state.Usage
}

// Cost is the row's cost as the CLI prints it.
func (r roleUsage) Cost() string { return fmt.Sprintf("$%.4f", r.CostUSD) }

// pageOf is the run page of rs.
func (s *Server) pageOf(ctx context.Context, rs host.RunStatus) runPage {
	p := runPage{runItem: itemOf(rs, s.cfg.Now())}
	if rs.Pending {
		return p
	}
	snap := rs.Snapshot
	st := snap.State
	v := p.view
	p.ExecDir, p.PlanRevision = v.ExecDir, v.PlanRevision
	plan := st.Plan.Markdown
	if plan == "" {
		plan, p.TaskDetail = st.Plan.Preamble, true
	}
	if strings.TrimSpace(plan) != "" {
		p.Plan = renderMarkdown(plan)
	}
	if v.Branch != "" && st.Status.Terminal() {
		if p.Merged = s.merged(ctx, v.Branch); !p.Merged {
			p.Merge = "gaffer merge " + v.RunID
		}
	}
	p.LastError, p.Question, p.Recovery = v.LastError, v.Question, v.Recovery
	if n := len(v.Errors); p.LastError == "" && n > 0 && (v.Status == state.RunHalted.String() || v.Status == state.RunFailed.String()) {
		p.LastError = v.Errors[n-1] // what ended it, at the top of its page
	}
	if v.Stopped {
		p.Interrupted, p.Resume = v.Interrupted, "gaffer resume "+v.RunID
		p.StopWhere = runview.StopWhere(v, time.UTC, s.cfg.Now())
	}
	p.Errors = withoutLast(v.Errors, p.LastError) // shown once, at the top
	for _, r := range runview.Roles(st.Usage) {
		p.Roles = append(p.Roles, roleUsage{Role: r, Usage: st.Usage[r]})
	}
	for i, ph := range p.Tree.Phases {
		pv := phaseView{Phase: ph, Kind: runview.Kind(ph.Tasks)}
		for _, t := range ph.Tasks {
			task, _ := st.Plan.Task(t.ID)
			pv.Tasks = append(pv.Tasks, taskView{Task: t, Description: strings.TrimSpace(task.Description), Files: task.Files, DependsOn: task.DependsOn})
		}
		if i < len(st.Progress.Phases) {
			ps := st.Progress.Phases[i]
			pv.Error, pv.Reviews = ps.Error, reviewsOf(ps)
			s.diff(ctx, &pv, ps, st.Run.ExecDir)
		}
		p.Phases = append(p.Phases, pv)
	}
	p.Sessions = readSessions(s.cfg.Transcripts, snap.RunID)
	return p
}

// merged reports whether the user's branch has all of branch's work:
// false when it lacks some, or when the repository cannot tell (the page
// then offers the merge, which says so itself).
func (s *Server) merged(ctx context.Context, branch string) bool {
	if s.cfg.Repo == nil {
		return false
	}
	m, err := s.cfg.Repo.Unmerged(ctx, branch)
	return err == nil && !m[branch]
}

// withoutLast is errs without its last occurrence of shown (the error
// the page shows at its top), errs itself when shown is not among them.
func withoutLast(errs []string, shown string) []string {
	for i := len(errs) - 1; i >= 0 && shown != ""; i-- {
		if errs[i] == shown {
			return slices.Delete(slices.Clone(errs), i, i+1)
		}
	}
	return errs
}

// diff fills in the phase's diff stat and bounded patch, from its
// pre-phase commit to its own commit, without the execution directory.
func (s *Server) diff(ctx context.Context, pv *phaseView, ps state.PhaseState, execDir string) {
	if s.cfg.Repo == nil || ps.PreCommit == "" || ps.PostCommit == "" {
		return
	}
	pv.DiffRange = render.Short(ps.PreCommit) + ".." + render.Short(ps.PostCommit)
	stats, err := s.cfg.Repo.DiffStat(ctx, ps.PreCommit, ps.PostCommit)
	if err != nil {
		pv.DiffError = err.Error()
		return
	}
	inExec := func(p string) bool { return execDir != "" && (p == execDir || strings.HasPrefix(p, execDir+"/")) }
	var files []fileStat
	for _, f := range stats {
		if !inExec(f.Path) {
			files = append(files, fileStat{Path: f.Path, Added: f.Added, Deleted: f.Deleted, Binary: f.Binary})
		}
	}
	var exclude []string
	if execDir != "" {
		exclude = []string{execDir}
	}
	w := &capped{max: maxPatchBytes}
	if err := s.cfg.Repo.Diff(ctx, ps.PreCommit, ps.PostCommit, exclude, w); err != nil && !errors.Is(err, errCapped) {
		pv.DiffError = err.Error()
	}
	pv.Files, pv.PatchCut = filesOf(files, w.b.String()), w.cut
}
