package host

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// MergeRequest asks to take a finished run's work, its branch gaffer/RUN,
// into the branch checked out in Repo.
type MergeRequest struct {
	RunID  string `json:"run_id,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"` // say what the merge would do, change nothing
	// Repo is the checkout to merge into; "" is the host's repository.
	Repo string `json:"repo,omitempty"`
}

// Merged is what a merge did, or with DryRun would do: its lines.
type Merged struct {
	Lines []string `json:"lines,omitempty"`
}

// DiffRequest asks for the change a run committed: phase Phase's
// (1-based), or with 0 every phase's.
type DiffRequest struct {
	RunID   string `json:"run_id,omitempty"`
	Phase   int    `json:"phase,omitempty"`
	ExecDir bool   `json:"exec_dir,omitempty"` // include the execution directory
	Repo    string `json:"repo,omitempty"`     // the repository; "" is the host's
}

// RunDiff is a run's change: a line naming the commits, and the unified
// diff.
type RunDiff struct {
	Header string `json:"header"`
	Patch  []byte `json:"patch,omitempty"`
}

// DeleteRequest asks to delete finished runs from the store with what
// they leave in git (DeleteRuns).
type DeleteRequest struct {
	RunIDs []string `json:"run_ids"`
	// Branches deletes unmerged run branches and rescue refs too.
	Branches bool `json:"branches,omitempty"`
	// Check checks everything and says what would be deleted, and
	// changes nothing.
	Check bool `json:"check,omitempty"`
}

// Deleted is what DeleteRuns deleted, or with Check would delete.
type Deleted struct {
	RunIDs      []string `json:"run_ids,omitempty"`
	Checkpoints int      `json:"checkpoints,omitempty"` // about how many, for the question asked first
	// Already is a single run deleted before, whose kept branch or
	// rescue refs are what goes.
	Already bool     `json:"already,omitempty"`
	Notes   []string `json:"notes,omitempty"` // a line per branch or set of refs deleted or kept
}

// PruneRequest asks what pruning the store takes: the finished runs but
// the newest Keep, and what no run owns in git.
type PruneRequest struct {
	Keep     int  `json:"keep"`
	Branches bool `json:"branches,omitempty"` // also unmerged branches of no run, and their rescue refs
	// Remove removes what no run owns; without it nothing changes. Owned
	// are runs that own their refs though gone from the store (the runs
	// just deleted for this prune, whose refs DeleteRuns decided on).
	Remove bool     `json:"remove,omitempty"`
	Owned  []string `json:"owned,omitempty"`
}

// Pruned is what a prune takes: Old, the finished runs to delete
// (DeleteRuns does), and what no run owns (Summary, "" for nothing),
// which Remove removed (Notes, a line each, and one per kept set).
type Pruned struct {
	Old     []string `json:"old,omitempty"`
	Kept    int      `json:"kept"`
	Summary string   `json:"summary,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// GitOps are merge, diff, delete and prune of a Host's store and
// repository, asking svc about runs: the Host itself, or a Service over
// it that refuses what it drives (Holder, serve's pool).
type GitOps struct {
	h   *Host
	svc Service
}

// GitOps returns h's GitOps asking svc about runs.
func (h *Host) GitOps(svc Service) GitOps { return GitOps{h: h, svc: svc} }

// Merge is GitOps.Merge of h.
func (h *Host) Merge(ctx context.Context, req MergeRequest) (Merged, error) {
	return h.GitOps(h).Merge(ctx, req)
}

// Diff is GitOps.Diff of h.
func (h *Host) Diff(ctx context.Context, req DiffRequest) (RunDiff, error) {
	return h.GitOps(h).Diff(ctx, req)
}

// DeleteRuns is GitOps.DeleteRuns of h.
func (h *Host) DeleteRuns(ctx context.Context, req DeleteRequest) (Deleted, error) {
	return h.GitOps(h).DeleteRuns(ctx, req)
}

// Prune is GitOps.Prune of h.
func (h *Host) Prune(ctx context.Context, req PruneRequest) (Pruned, error) {
	return h.GitOps(h).Prune(ctx, req)
}

// repo is the repository at dir, the host's for "".
func (g GitOps) repo(dir string) (*workspace.Repo, error) {
	if dir == "" {
		return g.h.repo, nil
	}
	repo, err := workspace.Open(dir)
	if err != nil {
		return nil, errorf(Refused, "open repository %s: %w", dir, err)
	}
	return repo, nil
}

func (g GitOps) cmd(args ...string) string { return g.h.cfg.Cmd(args...) }

// Merge takes the work of a finished run, its branch gaffer/RUN, into the
// branch checked out in the repository, or with DryRun says what that
// would do. It fast-forwards when the branch has no commit of its own,
// and otherwise makes one merge commit. A run deleted with its branch
// kept (it held unmerged work) is merged as a finished run's. An
// unfinished run, a run that worked in place, a missing branch, a merge,
// rebase, cherry-pick or bisect of the user's under way, uncommitted
// changes to tracked files, files git does not track (ignored ones too)
// where the merge would write, and a conflict are refused (Refused) in
// one line, before anything is changed.
func (g GitOps) Merge(ctx context.Context, req MergeRequest) (Merged, error) {
	rs, err := g.svc.Status(ctx, RunRequest{RunID: req.RunID})
	if err != nil {
		if CodeOf(err) == Refused && CheckRunID(req.RunID) == nil {
			if repo, oerr := workspace.Open(cmp.Or(req.Repo, g.h.repoRoot())); oerr == nil && repo.HasBranch(ctx, RunBranch(req.RunID)) {
				if in, herr := hasRun(ctx, g.svc, req.RunID); herr == nil && !in {
					note := fmt.Sprintf("Run %s was deleted; its branch %s kept its work.", req.RunID, RunBranch(req.RunID))
					return g.mergeBranch(ctx, repo, req.RunID, "Merge gaffer run "+req.RunID, note, "the branch", req.DryRun)
				}
			}
		}
		return Merged{}, err
	}
	repo, err := g.repo(req.Repo)
	if err != nil {
		return Merged{}, err
	}
	snap := rs.Snapshot
	id := snap.RunID
	st := ViewStatus(snap)
	if !st.Terminal() {
		return Merged{}, errorf(Refused, "run %s is %s: merge it once it has finished (%s)", id, st, g.cmd("status", id))
	}
	if snap.State.Run.WorkTree == "" {
		return Merged{Lines: []string{fmt.Sprintf("Nothing to merge: run %s worked in place, so its commits are on the branch it ran on already.", id)}}, nil
	}
	note := ""
	if st != state.RunCompleted {
		note = fmt.Sprintf("Run %s is %s: %s holds the phases that passed their review.", id, st, RunBranch(id))
	}
	return g.mergeBranch(ctx, repo, id, mergeMessage(snap), note, "the run and its branch", req.DryRun)
}

// repoRoot is the root of the host's repository, "" without one.
func (h *Host) repoRoot() string {
	if h.repo == nil {
		return ""
	}
	return h.repo.Root()
}

// mergeBranch merges run id's branch (Merge), saying note first when
// there is work to merge; what names what `gaffer delete RUN` removes.
func (g GitOps) mergeBranch(ctx context.Context, repo *workspace.Repo, id, message, note, what string, dryRun bool) (Merged, error) {
	if repo == nil {
		return Merged{}, errorf(Refused, "run %s: no repository to merge into", id)
	}
	branch := RunBranch(id)
	var (
		p   workspace.MergePlan
		err error
	)
	if dryRun {
		p, err = repo.PlanMerge(ctx, branch)
	} else {
		p, err = repo.MergeBranch(ctx, branch, message)
	}
	if err := g.mergeRefusal(err, id, branch, p); err != nil {
		return Merged{}, err
	}
	var m Merged
	say := func(format string, args ...any) { m.Lines = append(m.Lines, fmt.Sprintf(format, args...)) }
	into := cmp.Or(p.Into, "HEAD")
	if p.UpToDate() {
		say("Nothing to merge: %s has every commit of %s already.", into, branch)
		return m, nil
	}
	if note != "" {
		say("%s", note)
	}
	commits := render.Plural(p.Commits, "commit")
	short := render.Short
	switch {
	case dryRun && p.FastForward:
		say("Would fast-forward %s to %s: %s, %s..%s. Nothing was changed; %s does it.", into, branch, commits, short(p.Head), short(p.Tip), g.cmd("merge", id))
	case dryRun:
		say("Would merge %s into %s with a merge commit: %s, no conflict. Nothing was changed; %s does it.", branch, into, commits, g.cmd("merge", id))
	case p.FastForward:
		say("Fast-forwarded %s to %s: %s, %s..%s.", into, branch, commits, short(p.Head), short(p.Tip))
	default:
		say("Merged %s into %s: %s, merge commit %s.", branch, into, commits, short(p.Result))
	}
	if !dryRun {
		say("The branch stays until you remove it: %s deletes %s.", g.cmd("delete", id), what)
	}
	return m, nil
}

// hasRun reports whether the store svc serves has run id.
func hasRun(ctx context.Context, svc Service, id string) (bool, error) {
	es, err := svc.List(ctx, ListRequest{})
	if err != nil {
		return false, err
	}
	for i := range es {
		if es[i].RunID == id {
			return true, nil
		}
	}
	return false, nil
}

// mergeRefusal turns MergeBranch's refusals into one line each (Refused).
func (g GitOps) mergeRefusal(err error, id, branch string, p workspace.MergePlan) error {
	var de *workspace.DirtyError
	var ce *workspace.MergeConflictError
	var ip *workspace.InProgressError
	var tw *workspace.InTheWayError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, workspace.ErrNoBranch):
		return errorf(Refused, "run %s: its branch %s is gone (deleted?): nothing to merge", id, branch)
	case errors.As(err, &de):
		return errorf(Refused, "your checkout has uncommitted changes to %s: commit or stash them, then %s", workspace.PathList(de.Paths, 10), g.cmd("merge", id))
	case errors.As(err, &ce):
		return errorf(Refused, "%s conflicts with %s in %s: nothing was changed; merge it yourself with git merge %s", branch, cmp.Or(p.Into, "HEAD"), workspace.PathList(ce.Paths, 10), branch)
	case errors.As(err, &ip):
		return errorf(Refused, "a git %s of yours is under way in your checkout: finish it, or end it with %s, then %s (nothing was changed)", ip.Op, ip.Finish(), g.cmd("merge", id))
	case errors.As(err, &tw):
		return errorf(Refused, "files git does not track stand where %s would write (%s): move them aside, then %s (nothing was changed)", branch, tw.Describe(10), g.cmd("merge", id))
	case errors.Is(err, workspace.ErrDetached):
		return errorf(Refused, "HEAD is detached: check out the branch to take run %s's work into, then %s", id, g.cmd("merge", id))
	}
	return err
}

// mergeMessage is the merge commit's message: the run and its goal's
// first line.
func mergeMessage(snap graph.Snapshot[state.ExecutionState]) string {
	goal, _, _ := strings.Cut(strings.TrimSpace(snap.State.Run.Goal), "\n")
	if r := []rune(goal); len(r) > 60 {
		goal = string(r[:59]) + "…"
	}
	msg := "Merge gaffer run " + snap.RunID
	if goal != "" {
		msg += ": " + goal
	}
	return msg
}

// Diff is the unified diff of phase n of a run (its pre-phase commit to
// its own commit), or with n 0 of every phase it committed (phase 1's
// pre-phase commit to the last phase commit), with one line naming the
// commits. The execution directory is left out unless ExecDir. A phase
// out of range is Usage; one that has no commit yet is Refused, naming
// its status. A diff git cannot make returns the header with the error.
func (g GitOps) Diff(ctx context.Context, req DiffRequest) (RunDiff, error) {
	rs, err := g.svc.Status(ctx, RunRequest{RunID: req.RunID})
	if err != nil {
		return RunDiff{}, err
	}
	repo, err := g.repo(req.Repo)
	if err != nil {
		return RunDiff{}, err
	}
	snap, n := rs.Snapshot, req.Phase
	id := snap.RunID
	phases := snap.State.Progress.Phases
	var from, to, what string
	switch {
	case n < 0 || n > len(phases) || (n > 0 && len(phases) == 0):
		return RunDiff{}, errorf(Usage, "--phase %d: run %s has %s", n, id, render.Plural(len(phases), "phase"))
	case n > 0:
		ps := phases[n-1]
		if ps.PostCommit == "" {
			return RunDiff{}, errorf(Refused, "phase %d of run %s has no commit yet (%s, attempt %d)", n, id, ps.Status, ps.Attempt)
		}
		from, to, what = ps.PreCommit, ps.PostCommit, fmt.Sprintf("phase %d (attempt %d)", n, ps.Attempt)
	default:
		last := 0
		for i, ps := range phases {
			if ps.PostCommit != "" {
				last = i + 1
			}
		}
		if last == 0 {
			return RunDiff{}, errorf(Refused, "run %s has committed no phase yet (%s)", id, ViewStatus(snap))
		}
		from, to, what = phases[0].PreCommit, phases[last-1].PostCommit, fmt.Sprintf("phases 1–%d", last)
	}
	var exclude []string
	note := ""
	if !req.ExecDir {
		exclude, note = []string{snap.State.Run.ExecDir}, " (without "+snap.State.Run.ExecDir+"; --exec-dir shows it)"
	}
	d := RunDiff{Header: fmt.Sprintf("# run %s, %s: git diff %s %s%s\n", id, what, render.Short(from), render.Short(to), note)}
	if repo == nil {
		return d, errorf(Refused, "diff of run %s: no repository", id)
	}
	var b bytes.Buffer
	if err := repo.Diff(ctx, from, to, exclude, &b); err != nil {
		return d, errorf(Refused, "diff of run %s: %w", id, err)
	}
	d.Patch = b.Bytes()
	return d, nil
}

// deletable reports whether a run may leave the store: it is finished and
// has no uncommitted changes of the user's still to put back.
func deletable(snap graph.Snapshot[state.ExecutionState]) bool {
	return ViewStatus(snap).Terminal() && !snap.State.Stash.Pending()
}

// DeleteRuns removes the finished runs RunIDs from the store, with their
// transcripts (with Check, it only checks and says what it would do).
// Everything is checked before anything is removed, and a refusal is one
// line (Refused): an unfinished run (cancel it first), one whose user's
// changes are still to be put back (resume it first), and a branch that
// is to go but is checked out in a work tree. Each run's branch goes too
// once its commits are in a branch of the user's (outside gaffer/), and
// its stash ref once the changes it kept are back; an unmerged branch
// and the rescue refs go only with Branches, and are otherwise kept with
// a line saying so. A single id of a run deleted already whose branch or
// rescue refs were kept is deleteKept's (Already).
func (g GitOps) DeleteRuns(ctx context.Context, req DeleteRequest) (Deleted, error) {
	ids := req.RunIDs
	if len(ids) == 0 {
		return Deleted{}, errorf(Usage, "delete: no run named")
	}
	repo := g.h.repo
	d := Deleted{RunIDs: ids}
	plans := make([]refPlan, 0, len(ids))
	for _, id := range ids {
		rs, err := g.svc.Status(ctx, RunRequest{RunID: id})
		if err != nil {
			if len(ids) == 1 && CodeOf(err) == Refused {
				if kept, kerr := g.keptOfDeleted(ctx, repo, id); kerr == nil && kept {
					return g.deleteKept(ctx, repo, id, req.Branches, req.Check)
				}
			}
			return Deleted{}, err
		}
		snap := rs.Snapshot
		switch st := ViewStatus(snap); {
		case !st.Terminal():
			return Deleted{}, errorf(Refused, "run %s is %s; cancel it first: %s", id, st, g.cmd("cancel", id))
		case snap.State.Stash.Pending():
			return Deleted{}, errorf(Refused, "run %s still keeps your uncommitted changes; put them back first: %s", id, g.cmd("resume", id))
		}
		d.Checkpoints += int(snap.Seq)
		p, err := g.planRunRefs(ctx, repo, id, req.Branches, true)
		if err != nil {
			return Deleted{}, err
		}
		plans = append(plans, p)
	}
	if req.Check {
		return d, nil
	}
	for i, id := range ids {
		if err := g.svc.Delete(ctx, RunRequest{RunID: id}); err != nil {
			return Deleted{}, err
		}
		n, err := plans[i].apply(ctx, repo, g.cmd)
		if err != nil {
			return Deleted{}, err
		}
		d.Notes = append(d.Notes, n...)
	}
	return d, nil
}

// keptOfDeleted reports whether run id is not in the store but its
// branch or rescue refs are in repo: a run deleted with its unmerged work
// kept.
func (g GitOps) keptOfDeleted(ctx context.Context, repo *workspace.Repo, id string) (bool, error) {
	if repo == nil || CheckRunID(id) != nil {
		return false, nil
	}
	if inStore, err := hasRun(ctx, g.svc, id); err != nil || inStore {
		return false, err
	}
	refs, err := repo.Refs(ctx, "refs/heads/"+RunBranch(id))
	if err != nil {
		return false, err
	}
	rescues, err := repo.Refs(ctx, workspace.RescueRefPrefix+id+"/")
	if err != nil {
		return false, err
	}
	return len(refs)+len(rescues) > 0, nil
}

// deleteKept removes what run id, deleted already, kept in git: its
// branch once it is merged, or with branches; its rescue refs with
// branches. An unmerged branch without branches is refused (Refused)
// with the two commands that end it.
func (g GitOps) deleteKept(ctx context.Context, repo *workspace.Repo, id string, branches, check bool) (Deleted, error) {
	p, err := g.planRunRefs(ctx, repo, id, branches, false)
	if err != nil {
		return Deleted{}, err
	}
	if !p.drop && !p.dropRescues {
		if p.branch != "" {
			return Deleted{}, errorf(Refused, "run %s was deleted already; its branch %s holds unmerged work: %s takes it into your branch, %s deletes it",
				id, p.branch, g.cmd("merge", id), g.cmd("delete", id, "--branches"))
		}
		return Deleted{}, errorf(Refused, "run %s was deleted already; its %s stay: %s deletes them", id, render.Plural(len(p.rescues), "rescue ref"), g.cmd("delete", id, "--branches"))
	}
	d := Deleted{RunIDs: []string{id}, Already: true}
	if check {
		return d, nil
	}
	if d.Notes, err = p.apply(ctx, repo, g.cmd); err != nil {
		return Deleted{}, err
	}
	return d, nil
}

// refPlan is what deleting a run does to its git refs, decided (and
// checked) before anything changes.
type refPlan struct {
	id          string
	branch      string // gaffer/ID; "" when there is none
	merged      bool   // its commits are in a branch of the user's
	drop        bool   // the branch goes: merged, or --branches
	stash       bool   // the stash ref goes (a run in the store, its changes back)
	rescues     []string
	dropRescues bool
	attempts    []string // its failed attempts' refs: they go with the run
}

// planRunRefs decides what deleting run id does to its refs: its branch
// goes when merged or with all, its stash ref with stash, its rescue refs
// with all. A branch that is to go but is checked out in a work tree is
// refused here (Refused), as git would refuse it half-way.
func (g GitOps) planRunRefs(ctx context.Context, repo *workspace.Repo, id string, all, stash bool) (refPlan, error) {
	p := refPlan{id: id, stash: stash}
	if repo == nil {
		return p, nil
	}
	branch := RunBranch(id)
	merged, err := repo.BranchMerged(ctx, branch, ForkBranchPrefix)
	switch {
	case errors.Is(err, workspace.ErrNoBranch):
	case err != nil:
		return p, err
	default:
		p.branch, p.merged, p.drop = branch, merged, merged || all
	}
	if p.drop {
		tree, err := repo.CheckedOut(ctx, branch)
		if err != nil {
			return p, err
		}
		if tree != "" {
			return p, errorf(Refused, "branch %s is checked out in %s: check out another branch there, then %s (nothing was deleted)",
				branch, tree, g.cmd(deleteArgs(id, all)...))
		}
	}
	if p.rescues, err = repo.Refs(ctx, workspace.RescueRefPrefix+id+"/"); err != nil {
		return p, err
	}
	p.dropRescues = all && len(p.rescues) > 0
	if p.attempts, err = repo.Refs(ctx, workspace.AttemptRefPrefix+id+"/"); err != nil {
		return p, err
	}
	return p, nil
}

func deleteArgs(id string, all bool) []string {
	if all {
		return []string{"delete", id, "--branches"}
	}
	return []string{"delete", id}
}

// apply carries out p and returns one line per branch or set of rescue
// refs removed or kept.
func (p refPlan) apply(ctx context.Context, repo *workspace.Repo, cmd func(...string) string) ([]string, error) {
	if repo == nil {
		return nil, nil
	}
	var notes []string
	switch {
	case p.branch == "":
	case p.drop:
		if err := repo.DeleteBranch(ctx, p.branch); err != nil {
			return nil, err
		}
		if p.merged {
			notes = append(notes, fmt.Sprintf("Deleted branch %s: its commits are merged.", p.branch))
		} else {
			notes = append(notes, fmt.Sprintf("Deleted branch %s and its unmerged commits (--branches).", p.branch))
		}
	default:
		notes = append(notes, fmt.Sprintf("Kept branch %s: it holds unmerged work (%s takes it into your branch; %s deletes it).",
			p.branch, cmd("merge", p.id), cmd("delete", p.id, "--branches")))
	}
	if p.stash {
		if err := repo.DeleteRef(ctx, workspace.StashRefPrefix+p.id); err != nil {
			return nil, err
		}
	}
	for _, r := range p.attempts { // the run's own record of what failed: it goes with the run, unannounced
		if err := repo.DeleteRef(ctx, r); err != nil {
			return nil, err
		}
	}
	switch {
	case len(p.rescues) == 0:
	case p.dropRescues:
		for _, r := range p.rescues {
			if err := repo.DeleteRef(ctx, r); err != nil {
				return nil, err
			}
		}
		notes = append(notes, fmt.Sprintf("Deleted %s of run %s (--branches).", render.Plural(len(p.rescues), "rescue ref"), p.id))
	default:
		notes = append(notes, fmt.Sprintf("Kept %s of run %s: changes a reset put aside (git stash apply %s; --branches deletes them).", render.Plural(len(p.rescues), "rescue ref"), p.id, p.rescues[0]))
	}
	return notes, nil
}

// Prune names the finished runs of the store but the newest Keep (Old,
// newest first, for DeleteRuns), and finds what no run of the store (or
// of Owned) owns: the work trees of no run in the store's work tree
// directory (a start killed before its first checkpoint), and the run
// branches (gaffer/ID) of no run that hold no unmerged work; with
// Branches, those of deleted runs that do, and their rescue refs. With
// Remove, it removes those, naming each (Notes; on an error, those
// removed before it). A branch of no run that is checked out in a work
// tree outside that directory is left, named, as is one of a deleted run.
// Prune deletes no run itself.
func (g GitOps) Prune(ctx context.Context, req PruneRequest) (Pruned, error) {
	if req.Keep < 0 {
		return Pruned{}, errorf(Usage, "--keep %d: want 0 or more", req.Keep)
	}
	es, err := g.svc.List(ctx, ListRequest{})
	if err != nil {
		return Pruned{}, err
	}
	owned := make(map[string]bool, len(es)+len(req.Owned))
	// The runs driven here own their work trees and branches before
	// their first checkpoint.
	for _, id := range append(slices.Clip(req.Owned), g.h.held.ids()...) {
		owned[id] = true
	}
	var p Pruned
	for _, r := range StatusesOf(es) { // newest first
		owned[r.Snapshot.RunID] = true
		if !deletable(r.Snapshot) {
			continue
		}
		if p.Kept < req.Keep {
			p.Kept++
			continue
		}
		p.Old = append(p.Old, r.Snapshot.RunID)
	}
	s, err := findStrays(ctx, g.h.repo, WorkTreesDir(g.h.dir), owned, req.Branches)
	if err != nil {
		return Pruned{}, err
	}
	p.Summary = s.summary()
	if !req.Remove {
		return p, nil
	}
	p.Notes, err = s.remove(ctx, g.h.repo, g.cmd)
	return p, err
}

// strays is what no run of a store owns in its repository.
type strays struct {
	trees []string // work trees (or what a cut-short add left of one)
	// branches are run branches of no run that go: their commits are in
	// a branch of the user's, or --branches.
	branches []refPlan
	kept     []string // branches of deleted runs with unmerged work, kept
	held     []string // branches of no run checked out in a work tree, kept
}

// summary names what remove removes, for the question asked first; ""
// for nothing.
func (s strays) summary() string {
	var parts []string
	if len(s.trees) > 0 {
		parts = append(parts, render.Plural(len(s.trees), "work tree"))
	}
	if len(s.branches) > 0 {
		parts = append(parts, branchCount(len(s.branches)))
	}
	return strings.Join(parts, " and ")
}

// findStrays finds what no run in owned has: the work trees under
// treesDir named by no run, and the branches gaffer/ID of no run. A
// branch whose commits are in a branch of the user's goes (with all,
// every one), unless it is checked out in a work tree other than a stray
// one; the others are kept.
func findStrays(ctx context.Context, repo *workspace.Repo, treesDir string, owned map[string]bool, all bool) (strays, error) {
	var s strays
	if repo == nil {
		return s, nil
	}
	trees, err := repo.WorkTreesUnder(treesDir)
	if err != nil {
		return s, err
	}
	strayTree := map[string]bool{}
	for _, t := range trees {
		if id := filepath.Base(t); !owned[id] {
			s.trees = append(s.trees, t)
			strayTree[t] = true
		}
	}
	refs, err := repo.Refs(ctx, "refs/heads/"+ForkBranchPrefix)
	if err != nil {
		return s, err
	}
	for _, ref := range refs {
		id := strings.TrimPrefix(ref, "refs/heads/"+ForkBranchPrefix)
		if owned[id] || CheckRunID(id) != nil {
			continue // a run's, or no run branch of gaffer's (gaffer/a/b)
		}
		branch := RunBranch(id)
		merged, err := repo.BranchMerged(ctx, branch, ForkBranchPrefix)
		if err != nil {
			return s, err
		}
		if !merged && !all {
			s.kept = append(s.kept, branch)
			continue
		}
		tree, err := repo.CheckedOut(ctx, branch)
		if err != nil {
			return s, err
		}
		if tree != "" && !strayTree[tree] && !strayTree[filepath.Join(treesDir, filepath.Base(tree))] {
			s.held = append(s.held, branch+" (checked out in "+tree+")")
			continue
		}
		// What a start cut short left of its tree (a record of git's
		// named after it, made before its gitdir) goes first.
		if t := filepath.Join(treesDir, id); !strayTree[t] && repo.WorkTreeLeft(t) {
			s.trees = append(s.trees, t)
			strayTree[t] = true
		}
		p := refPlan{id: id, branch: branch, merged: merged, drop: true}
		if p.attempts, err = repo.Refs(ctx, workspace.AttemptRefPrefix+id+"/"); err != nil {
			return s, err
		}
		if all {
			if p.rescues, err = repo.Refs(ctx, workspace.RescueRefPrefix+id+"/"); err != nil {
				return s, err
			}
			p.dropRescues = len(p.rescues) > 0
		}
		s.branches = append(s.branches, p)
	}
	return s, nil
}

// remove removes the stray work trees, then the branches that go, and
// returns a line for each, and one for the branches kept.
func (s strays) remove(ctx context.Context, repo *workspace.Repo, cmd func(...string) string) ([]string, error) {
	var notes []string
	for _, t := range s.trees {
		if err := repo.RemoveWorkTree(ctx, t); err != nil {
			return notes, err
		}
		notes = append(notes, fmt.Sprintf("Removed work tree %s: no run owns it (a start cut short).", t))
	}
	for _, p := range s.branches {
		if err := repo.DeleteBranch(ctx, p.branch); err != nil {
			return notes, err
		}
		if p.merged {
			notes = append(notes, fmt.Sprintf("Deleted branch %s: no run owns it, and its commits are merged.", p.branch))
		} else {
			notes = append(notes, fmt.Sprintf("Deleted branch %s of a deleted run and its unmerged commits (--branches).", p.branch))
		}
		for _, r := range append(slices.Clone(p.rescues), p.attempts...) {
			if err := repo.DeleteRef(ctx, r); err != nil {
				return notes, err
			}
		}
		if len(p.rescues) > 0 {
			notes = append(notes, fmt.Sprintf("Deleted %s of run %s (--branches).", render.Plural(len(p.rescues), "rescue ref"), p.id))
		}
	}
	if len(s.kept) > 0 {
		notes = append(notes, fmt.Sprintf("Kept %s of deleted runs with unmerged work: %s (gaffer list shows them; %s deletes them).",
			branchCount(len(s.kept)), workspace.PathList(s.kept, 5), cmd("prune", "--branches")))
	}
	if len(s.held) > 0 {
		notes = append(notes, fmt.Sprintf("Kept %s of no run, checked out: %s.", branchCount(len(s.held)), strings.Join(s.held, ", ")))
	}
	return notes, nil
}

// branchCount is "1 branch" or "N branches".
func branchCount(n int) string {
	if n == 1 {
		return "1 branch"
	}
	return fmt.Sprintf("%d branches", n)
}
