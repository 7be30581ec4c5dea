package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
)

func historyCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "history",
		Flags:        localGlobals(&ucli.BoolFlag{Name: "json", EnvVars: []string{"GAFFER_JSON"}, Usage: "print JSON"}),
		Usage:        "list a run's checkpoints, newest first (the newest run without RUN)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "json")
			if err != nil {
				return err
			}
			return withService(c, io, true, func(svc host.Service, _ func(...string) string) error {
				views, err := svc.History(c.Context, host.RunRequest{RunID: a.run})
				if err != nil {
					return err
				}
				return writeHistory(io.Out, views, a.Bool("json"))
			})
		},
	}
}

// CheckpointView is one checkpoint as `history --json` shows it.
type CheckpointView = host.Checkpoint

// writeHistory prints a run's checkpoints, newest first: seq, the plan's
// phase and attempt the run was at, the step that ran and the one due
// next in the user's words, status and time, every line within 80
// columns (with asJSON, CheckpointViews).
func writeHistory(w io.Writer, views []CheckpointView, asJSON bool) error {
	if asJSON {
		return writeJSON(w, views)
	}
	zone := displayZone(time.Now())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SEQ\tPHASE\tATTEMPT\tRAN\tNEXT\tSTATUS\tTIME (%s)\n", zone)
	for _, v := range views {
		phase, attempt := "-", "-"
		if v.Phases > 0 {
			phase = fmt.Sprintf("%d/%d", v.Phase, v.Phases)
			if v.PhaseStatus != "" {
				phase += " " + v.PhaseStatus
			}
		}
		if v.Attempt > 0 {
			attempt = fmt.Sprint(v.Attempt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Seq, phase, attempt, stepWords(v.Ran, "-"), stepWords(v.Next, "end"),
			v.Status, v.Time.In(zone).Format(time.DateTime))
	}
	return tw.Flush()
}

// stepWord names a workflow node in history as the user knows the step.
var stepWord = map[string]string{
	graph.START:         "start",
	graph.END:           "end",
	nodes.NodeArchitect: "plan",
	nodes.NodeValidator: "check",
	nodes.NodeApproval:  "approval",
	nodes.NodePhase:     "phase",
	nodes.NodeReview:    "review",
	nodes.NodeNextTask:  "summary",
	nodes.NodeRecover:   "recovery",
	nodes.NodeRestore:   "restore",
	nodes.NodeLane:      "lane",
	nodes.NodeCombine:   "combine",
}

// stepWords is the steps of nodes in history's words, none when empty
// (a checkpoint that waits on an interrupt ran no step).
func stepWords(ns []string, none string) string {
	if len(ns) == 0 {
		return none
	}
	if len(ns) == 1 && ns[0] == graph.START {
		return "start"
	}
	out := make([]string, 0, len(ns))
	for i := 0; i < len(ns); {
		j := i + 1
		for j < len(ns) && ns[j] == ns[i] {
			j++
		}
		w := cmp.Or(stepWord[ns[i]], ns[i])
		if j-i > 1 { // a phase's lanes: "2 lanes", not "lane,lane"
			w = fmt.Sprintf("%d %ss", j-i, w)
		}
		out = append(out, w)
		i = j
	}
	return strings.Join(out, ",")
}
