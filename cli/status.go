package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

// RunView is a run as `status --json` and `list --json` show it.
type RunView struct {
	RunID   string `json:"run_id"`
	Status  string `json:"status"`
	Goal    string `json:"goal"`
	Mode    string `json:"mode,omitempty"`
	ExecDir string `json:"exec_dir"`
	// Branch and WorkTree are the run's own branch and work tree (the
	// tree is gone once the run has ended); absent for a run in place.
	Branch       string                 `json:"branch,omitempty"`
	WorkTree     string                 `json:"work_tree,omitempty"`
	CreatedAt    time.Time              `json:"created_at"`
	CurrentPhase int                    `json:"current_phase,omitempty"` // 1-based; 0 before the plan is approved
	PlanRevision int                    `json:"plan_revision"`
	Phases       []PhaseView            `json:"phases,omitempty"`
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
	// is running (killed, or stopped by an error): gaffer resume continues
	// it. LastError is then the state's last error, if it has one.
	Stopped   bool   `json:"stopped,omitempty"`
	LastError string `json:"last_error,omitempty"`
	// Plan is the run's whole stored plan (status --json only; list
	// leaves it out); nil before the architect has written one.
	Plan *PlanView `json:"plan,omitempty"`
	// Recovery is what recovery did (Doctor calls, replans that answered
	// with a revision and, apart, the replans reserved, escalations, the
	// last decision and why); absent with recovery off or before a phase
	// failed.
	Recovery *nodes.RecoveryView `json:"recovery,omitempty"`
}

// PhaseView is one phase of a RunView.
type PhaseView struct {
	Number     int                 `json:"number"`
	Tasks      []string            `json:"tasks"`
	Status     string              `json:"status"`
	Attempt    int                 `json:"attempt"`
	PreCommit  string              `json:"pre_commit,omitempty"`
	PostCommit string              `json:"post_commit,omitempty"`
	Review     *state.ReviewResult `json:"review,omitempty"`
}

func viewOf(snap graph.Snapshot[state.ExecutionState]) RunView {
	s := snap.State
	v := RunView{RunID: snap.RunID, Status: runStatus(snap).String(), Goal: s.Run.Goal, ExecDir: s.Run.ExecDir,
		CreatedAt: s.Run.CreatedAt, PlanRevision: s.Progress.PlanRevision, Errors: s.Errors, Usage: s.Usage,
		Checkpoint: snap.Seq, Next: snap.Next}
	if s.Run.WorkTree != "" {
		v.Branch, v.WorkTree = host.RunBranch(s.Run.ID), s.Run.WorkTree
	}
	total := s.TotalUsage()
	v.CostUSD, v.InputTokens, v.OutputTokens, v.CachedTokens = math.Round(total.CostUSD*1e6)/1e6, total.InputTokens, total.OutputTokens, total.CachedTokens
	if rv, ok := nodes.Recovery(s); ok {
		v.Recovery = &rv
	}
	if len(s.Plan.Phases) > 0 {
		v.Mode = s.Plan.Mode.String()
		v.CurrentPhase = s.Progress.CurrentPhase + 1
	}
	for i, ph := range s.Plan.Phases {
		pv := PhaseView{Number: i + 1, Tasks: ph.TaskIDs, Status: state.PhasePending.String()}
		if i < len(s.Progress.Phases) {
			ps := s.Progress.Phases[i]
			pv.Status, pv.Attempt, pv.PreCommit, pv.PostCommit, pv.Review = ps.Status.String(), ps.Attempt, ps.PreCommit, ps.PostCommit, ps.Review
		}
		v.Phases = append(v.Phases, pv)
	}
	return v
}

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
				return writeStatus(io.Out, cmd, rs, a.Bool("json"))
			})
		},
	}
}

// runView is the view of rs: viewOf its checkpoint, with whether it was
// stopped and its last error.
func runView(rs host.RunStatus) RunView {
	if rs.Pending {
		return RunView{RunID: rs.Snapshot.RunID, Status: rs.Status}
	}
	v := viewOf(rs.Snapshot)
	if rs.Stopped {
		v.Stopped = true
		if n := len(rs.Snapshot.State.Errors); n > 0 {
			v.LastError = rs.Snapshot.State.Errors[n-1]
		}
	}
	return v
}

// statusText is v's status for text output: "running (stopped: …)" for a
// stopped run.
func (v RunView) statusText() string {
	if v.Stopped {
		return v.Status + " (" + stoppedNote + ")"
	}
	return v.Status
}

// stoppedNote follows "running" in status and list for a run that no
// process is running.
const stoppedNote = "stopped: no process is running it — gaffer resume continues it"

// writeStatus prints one run: its heading, phase tree, errors and what to
// do next (with asJSON, its RunView with the plan).
func writeStatus(w io.Writer, cmd func(...string) string, rs host.RunStatus, asJSON bool) error {
	v := runView(rs)
	if rs.Pending {
		if asJSON {
			return writeJSON(w, v)
		}
		_, err := fmt.Fprintf(w, "run:       %s\nstatus:    %s (no checkpoint yet)\n", v.RunID, v.Status)
		return err
	}
	snap := rs.Snapshot
	if asJSON {
		v.Plan = planViewOf(snap.State)
		return writeJSON(w, v)
	}
	id := v.RunID
	next := strings.Join(v.Next, ", ")
	if next == "" {
		next = "none"
	}
	fmt.Fprintf(w, "run:       %s\nstatus:    %s\ngoal:      %s\nexec dir:  %s\ncheckpoint: %d (next: %s)\ncost:      %s\n\n",
		v.RunID, v.statusText(), v.Goal, v.ExecDir, v.Checkpoint, next, usageText(snap.State.TotalUsage()))
	if v.Branch != "" {
		tree := v.WorkTree
		if snap.State.Status.Terminal() {
			tree = "removed (the run has ended)"
		}
		fmt.Fprintf(w, "branch:    %s\nwork tree: %s\n\n", v.Branch, tree)
	}
	writeStatusTree(w, snap, time.Now())
	for _, m := range v.Errors {
		fmt.Fprintf(w, "\nerror: %s\n", m)
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
					return writeJSON(io.Out, []RunView{})
				}
				_, err := fmt.Fprintln(io.Out, noRunsLine(dir))
				return err
			}
			return withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				rs, err := svc.List(c.Context)
				if err != nil {
					return err
				}
				return writeList(io.Out, rs, c.Bool("json"))
			})
		},
	}
}

// writeList prints every run of the store.
func writeList(w io.Writer, rs []host.RunStatus, asJSON bool) error {
	views := make([]RunView, 0, len(rs))
	for _, r := range rs {
		views = append(views, runView(r))
	}
	if asJSON {
		return writeJSON(w, views)
	}
	zone := displayZone(time.Now())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "RUN\tSTATUS\tPHASE\tCREATED (%s)\tCOST\tGOAL\n", zone)
	for _, v := range views {
		phase := "-"
		if len(v.Phases) > 0 {
			phase = fmt.Sprintf("%d/%d", v.CurrentPhase, len(v.Phases))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.RunID, v.statusText(), phase, v.CreatedAt.In(zone).Format(time.DateTime), listCost(v.Usage), listGoal(v.Goal))
	}
	return tw.Flush()
}

// listGoalRunes is the most runes of a goal that list prints.
const listGoalRunes = 60

// listGoal is the GOAL column of list: the goal on one line (each run of
// white space, newlines and tabs included, one space), cut to
// listGoalRunes runes ending in "…" when it is longer. list --json and
// status keep the goal whole.
func listGoal(goal string) string {
	g := strings.Join(strings.Fields(goal), " ")
	if utf8.RuneCountInString(g) <= listGoalRunes {
		return g
	}
	return strings.TrimRight(string([]rune(g)[:listGoalRunes-1]), " ") + "…"
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

// writeStatusTree writes the run's tree as status shows it at now.
func writeStatusTree(w io.Writer, snap graph.Snapshot[state.ExecutionState], now time.Time) {
	v := watchViewFrom(snap, now)
	writeRunHeading(w, v, false)
	writePhaseTree(w, v.Phases)
}
