package cli

import (
	"encoding/json"
	"fmt"
	"github.com/gaffer-dev/gaffer/runview"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
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
				return writeStatus(io.Out, cmd, rs, a.Bool("json"))
			})
		},
	}
}

// runView is the view of rs now (runview.RunOf).
func runView(rs host.RunStatus) runview.Run { return runview.RunOf(rs, time.Now()) }

// statusText is v's status for text output: "running (stopped: …)" for a
// stopped run.
func statusText(v runview.Run) string {
	if v.Stopped {
		return v.Status + " (" + stoppedNote + ")"
	}
	return v.Status
}

// stoppedNote follows "running" in status and list for a run that no
// process is running.
const stoppedNote = "stopped: no process is running it — gaffer resume continues it"

// writeStatus prints one run: its heading, phase tree, errors and what to
// do next (with asJSON, its runview.Run with the plan).
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
		v.Plan = runview.PlanOf(snap.State)
		return writeJSON(w, v)
	}
	id := v.RunID
	next := strings.Join(v.Next, ", ")
	if next == "" {
		next = "none"
	}
	fmt.Fprintf(w, "run:       %s\nstatus:    %s\ngoal:      %s\nexec dir:  %s\ncheckpoint: %d (next: %s)\ncost:      %s\n\n",
		v.RunID, statusText(v), v.Goal, v.ExecDir, v.Checkpoint, next, usageText(snap.State.TotalUsage()))
	if v.Branch != "" {
		tree := v.WorkTree
		if snap.State.Status.Terminal() {
			tree = "removed (the run has ended)"
		}
		fmt.Fprintf(w, "branch:    %s\nwork tree: %s\n\n", v.Branch, tree)
	}
	writeStatusTree(w, v)
	for _, m := range v.Errors {
		fmt.Fprintf(w, "\nerror: %s\n", m)
	}
	if v.Status == state.RunAwaitingApproval.String() {
		fmt.Fprintf(w, "\nplan:    %s\napprove: %s\nreject:  %s\n", cmd("plan", "show", id), cmd("approve", id), cmd("reject", id, `--feedback "…"`))
	}
	if l := host.UserChangesLine(snap.State); l != "" {
		fmt.Fprintf(w, "\n%s\n", l)
	}
	return nil
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
	views := make([]runview.Run, 0, len(rs))
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.RunID, statusText(v), phase, v.CreatedAt.In(zone).Format(time.DateTime), listCost(v.Usage), listGoal(v.Goal))
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
