package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

func statusCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "status",
		Usage:        "show a run's status and phases (the newest run without RUN)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags:        localGlobals(&ucli.BoolFlag{Name: "json", EnvVars: []string{"GAFFER_JSON"}, Usage: "print JSON"}),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "json")
			if err != nil {
				return err
			}
			return withService(c, io, true, func(svc host.Service, cmd func(...string) string) error {
				rs, err := svc.Status(c.Context, host.RunRequest{RunID: a.run})
				if err != nil {
					return err
				}
				var unmerged map[string]bool
				if b := runView(rs).Branch; b != "" {
					unmerged = unmergedUnder(c, b)
				}
				return writeStatus(io.Out, cmd, rs, a.Bool("json"), unmerged)
			})
		},
	}
}

// runView is the view of rs now (runview.RunOf).
func runView(rs host.RunStatus) runview.Run { return runview.RunOf(rs, time.Now()) }

// statusText is v's status for status: "running (stopped: …)" for a
// stopped run.
func statusText(v runview.Run) string {
	if v.Stopped {
		return v.Status + " (" + stoppedNote + ")"
	}
	return v.Status
}

// stoppedNote follows "running" in status for a run that no process is
// running; the lines below it say why (writeStopped).
const stoppedNote = "stopped: no process runs it"

// writeStopped says, under a stopped run's status line, what is known of
// its stop: the error that stopped it, or that it was interrupted (a
// signal, a kill: nothing was kept), when and where (its last checkpoint,
// where its clock stopped), and the command that continues it.
//
//	last error: run r-1 stopped: load script: open s.yaml: no such file or directory
//	stopped:   by that error at 10:42:05 during phase 2 (attempt 1)
//	resume:    fix the cause, then gaffer resume r-1 continues it
func writeStopped(w io.Writer, cmd func(...string) string, v runview.Run, now time.Time) {
	if !v.Stopped {
		return
	}
	where := runview.StopWhere(v, time.Local, now)
	resume := cmd("resume", v.RunID) + " continues it"
	if v.Interrupted {
		fmt.Fprintf(w, "stopped:   interrupted %s\nresume:    %s\n", where, resume)
		return
	}
	if v.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", v.LastError)
	}
	fmt.Fprintf(w, "stopped:   by that error %s\nresume:    fix the cause, then %s\n", where, resume)
}

// writeStatus prints one run: its heading, phase tree, errors and what to
// do next (with asJSON, its runview.Run with the plan). unmerged is the
// runs' branches that hold work the current branch lacks.
func writeStatus(w io.Writer, cmd func(...string) string, rs host.RunStatus, asJSON bool, unmerged map[string]bool) error {
	v := runView(rs)
	v.Unmerged = v.Branch != "" && unmerged[v.Branch]
	if rs.Pending {
		if asJSON {
			return writeJSON(w, v)
		}
		_, err := fmt.Fprintf(w, "run:       %s\nstatus:    %s (no checkpoint yet)\n", v.RunID, v.Status)
		return err
	}
	snap := rs.Snapshot
	if asJSON {
		v.Plan = runview.PlanOf(snap.State)
		return writeJSON(w, v)
	}
	id := v.RunID
	fmt.Fprintf(w, "run:       %s\nstatus:    %s\n", v.RunID, statusText(v))
	writeStopped(w, cmd, v, time.Now())
	fmt.Fprintf(w, "goal:      %s\nexec dir:  %s\ncheckpoint: %d\nnext:      %s\ncost:      %s\n",
		v.Goal, v.ExecDir, v.Checkpoint, nodes.NextStep(snap.State, v.Next), usageText(snap.State.TotalUsage()))
	if l := recoveryText(v.Recovery); l != "" {
		fmt.Fprintf(w, "recovery:  %s\n", l)
	}
	fmt.Fprintln(w)
	if v.Branch != "" {
		tree := v.WorkTree
		if snap.State.Status.Terminal() {
			tree = "removed (the run has ended)"
		}
		fmt.Fprintf(w, "branch:    %s\nwork tree: %s\n", v.Branch, tree)
		if v.Unmerged && snap.State.Status.Terminal() {
			fmt.Fprintf(w, "merge:     %s (takes its work into your current branch)\n", cmd("merge", id))
		}
		fmt.Fprintln(w)
	}
	writeStatusTree(w, v)
	for _, m := range v.Errors {
		if m != v.LastError || !v.Stopped || v.Interrupted { // said under the status line
			fmt.Fprintf(w, "\nerror: %s\n", m)
		}
	}
	if q, ok := nodes.PendingQuestion(snap.State); ok && v.Status == state.RunAwaitingApproval.String() {
		writeQuestion(w, cmd, id, q)
	} else if v.Status == state.RunAwaitingApproval.String() {
		fmt.Fprintf(w, "\nplan:    %s\napprove: %s\nreject:  %s\n", cmd("plan", "show", id), cmd("approve", id), cmd("reject", id, `--feedback "…"`))
	}
	if l := host.UserChangesLine(snap.State); l != "" {
		fmt.Fprintf(w, "\n%s\n", l)
	}
	return nil
}

// recoveryText is status's line on what recovery did in a run (its
// Doctor calls, replans, escalations, a rollback of the developer's model
// and the last decision), as --json's "recovery" holds it; "" when
// recovery has done nothing.
func recoveryText(r *nodes.RecoveryView) string {
	if r == nil {
		return ""
	}
	doctor := plural(r.DoctorCalls, "Doctor call")
	if r.DoctorStrong > 0 {
		doctor += fmt.Sprintf(" (%d strong)", r.DoctorStrong)
	}
	parts := []string{doctor, plural(r.Replans, "replan"), plural(r.Escalations, "escalation")}
	if r.RolledBackTo != "" {
		parts = append(parts, "developer rolled back to "+r.RolledBackTo)
	}
	s := strings.Join(parts, ", ")
	if l := r.Last; l != nil {
		where := fmt.Sprintf("phase %d attempt %d", l.Phase, l.Attempt)
		if l.Lane != "" {
			where += " lane " + l.Lane
		}
		s += fmt.Sprintf("; last: %s in %s", l.Decision, where)
		if why, _, _ := strings.Cut(strings.TrimSpace(l.Why), "\n"); why != "" {
			s += " (" + truncate(why, 80) + ")"
		}
	}
	return s
}

// writeStatusTree draws v's heading and phase tree, as status prints them.
func writeStatusTree(w io.Writer, v runview.Run) {
	writeRunHeading(w, v.Tree, false)
	writePhaseTree(w, v.Tree.Phases)
}

func listCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "list",
		Usage:        "list the repository's runs, newest first",
		OnUsageError: onUsageError,
		Flags:        localGlobals(&ucli.BoolFlag{Name: "json", EnvVars: []string{"GAFFER_JSON"}, Usage: "print JSON"}),
		Action: func(c *ucli.Context) error {
			if dir, err := missingStore(c); err != nil {
				return err
			} else if dir != "" {
				if c.Bool("json") {
					return writeJSON(io.Out, []runview.Run{})
				}
				_, err := fmt.Fprintln(io.Out, noRunsLine(dir))
				return err
			}
			// git's answer on the branches comes while the store is read:
			// with 10,000 run branches it takes as long.
			unmerged := make(chan map[string]bool, 1)
			go func() { unmerged <- unmergedBranches(c) }()
			// The listing is printed while the store closes: a store of
			// many runs has hundreds of table files to close.
			var written chan error
			err := withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				es, err := svc.List(c.Context, host.ListRequest{})
				if err != nil {
					return err
				}
				cols, _ := termSize(io.Out)()
				um := <-unmerged
				written = make(chan error, 1)
				go func() { written <- writeList(io.Out, es, c.Bool("json"), um, cols) }()
				return nil
			})
			if written != nil {
				err = cmp.Or(err, <-written)
			}
			return err
		},
	}
}

// writeList prints every run of the store (listview.go), its runs'
// branches checked against the repository's current branch.
func writeList(w io.Writer, es []host.ListEntry, asJSON bool, unmerged map[string]bool, cols int) error {
	listedUnmerged := 0 // of the unmerged branches, those of the store's runs
	// The table's rows are made one at a time, in one list of phases.
	var phases []runview.RunPhase
	row := func(i int, brief bool) runview.Run {
		var v runview.Run
		if brief {
			v = runview.BriefRowReusing(&es[i], &phases)
		} else {
			v = runview.RowOfEntry(&es[i])
		}
		v.Unmerged = v.Branch != "" && unmerged[v.Branch]
		if v.Unmerged {
			listedUnmerged++
		}
		return v
	}
	// The other unmerged branches are deleted runs' (see deletedRows).
	deleted := func() []runview.Run {
		if listedUnmerged == len(unmerged) {
			return nil
		}
		return deletedRows(es, unmerged)
	}
	if asJSON {
		views := make([]runview.Run, len(es))
		for i := range es {
			views[i] = row(i, false)
		}
		return writeJSON(w, append(views, deleted()...))
	}
	t := newListTable(displayZone(time.Now()), len(es))
	for i := range es {
		v := row(i, true) // the table prints the total alone
		t.add(&v, es[i].TotalUsage())
	}
	rows := deleted()
	for i := range rows {
		t.add(&rows[i], state.Usage{})
	}
	return t.write(w, cols)
}

// deletedRows are the rows of the runs deleted from the store whose
// branches (gaffer/RUN, in unmerged) were kept for the work they hold,
// to follow the store's runs, newest id first.
func deletedRows(es []host.ListEntry, unmerged map[string]bool) []runview.Run {
	if len(unmerged) == 0 {
		return nil
	}
	listed := make(map[string]bool, len(es))
	for i := range es {
		listed[es[i].RunID] = true
	}
	var ids []string
	for b := range unmerged {
		id, ok := strings.CutPrefix(b, host.ForkBranchPrefix)
		if ok && !listed[id] && host.CheckRunID(id) == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	rows := make([]runview.Run, len(ids))
	for i, id := range ids {
		rows[i] = runview.DeletedRow(id, host.RunBranch(id))
	}
	return rows
}

// listGoalRunes is the most runes of a goal that list prints.
const listGoalRunes = 60

// listGoal is the GOAL column of list: the goal on one line (each run of
// white space, newlines and tabs included, one space), cut to
// listGoalRunes runes ending in "…" when it is longer. list --json and
// status keep the goal whole.
func listGoal(goal string) string {
	if len(goal) <= listGoalRunes && oneLine(goal) {
		return goal // most goals: nothing to change, nothing to allocate
	}
	g := strings.Join(strings.Fields(goal), " ")
	if utf8.RuneCountInString(g) <= listGoalRunes {
		return g
	}
	return strings.TrimRight(string([]rune(g)[:listGoalRunes-1]), " ") + "…"
}

// oneLine reports whether s is ASCII without a control character, a
// space at either end or two spaces in a row: what listGoal leaves as it
// is.
func oneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x7f || c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' ') {
			return false
		}
	}
	return true
}

// displayZone is the one zone list and history print times in: the local
// zone as it is at now, fixed, so that every row reads on the same clock
// (a summer and a winter time are not mixed) and the header can name it.
func displayZone(now time.Time) *time.Location {
	name, offset := now.Zone()
	if name == "" || name[0] == '+' || name[0] == '-' {
		name = "UTC" + now.Format("-07:00")
		if offset == 0 {
			name = "UTC"
		}
	}
	return time.FixedZone(name, offset)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
