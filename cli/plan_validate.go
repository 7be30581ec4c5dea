package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/state"
)

// planCommand is the "plan" group.
func (a *app) planCommand() *ucli.Command {
	return &ucli.Command{
		Name:         "plan",
		Usage:        "work with plan files",
		Subcommands:  []*ucli.Command{a.planValidateCommand(), a.planShowCommand()},
		Action:       groupAction,
		OnUsageError: onUsageError,
	}
}

func (a *app) planValidateCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "validate",
		Usage:     "check a plan and show its phases",
		ArgsUsage: "FILE",
		Description: "Parses FILE as a gaffer plan, checks it (duplicate ids, unknown dependencies,\n" +
			"cycles, impl tasks without a test task before them) and prints the phases it\n" +
			"would run in. Exits 3 and lists every problem as FILE:LINE: message when the\n" +
			"plan is invalid.",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", EnvVars: []string{"GAFFER_JSON"}, Usage: "print the phases and tasks as JSON"},
			&ucli.BoolFlag{Name: "no-tdd", EnvVars: []string{"GAFFER_NO_TDD"}, Usage: "do not require a test task before every impl task"},
			&ucli.StringFlag{Name: "mode", EnvVars: []string{"GAFFER_MODE"}, Usage: "auto, task or phased: check the plan as a profile with that mode: would run it"},
		},
		OnUsageError: onUsageError,
		Action: func(c *ucli.Context) error {
			v := PlanValidate{JSON: c.Bool("json"), NoTDD: c.Bool("no-tdd"), Mode: c.String("mode")}
			// urfave/cli stops reading flags at FILE; accept ours after it too.
			var files []string
			args := c.Args().Slice()
			for i := 0; i < len(args); i++ {
				arg := args[i]
				switch {
				case arg == "--json" || arg == "-json":
					v.JSON = true
				case arg == "--no-tdd" || arg == "-no-tdd":
					v.NoTDD = true
				case (arg == "--mode" || arg == "-mode") && i+1 < len(args):
					i++
					v.Mode = args[i]
				case strings.HasPrefix(arg, "--mode=") || strings.HasPrefix(arg, "-mode="):
					_, v.Mode, _ = strings.Cut(arg, "=")
				default:
					if strings.HasPrefix(arg, "-") && arg != "-" {
						return usageErrorf("plan validate: unknown flag %q", arg)
					}
					files = append(files, arg)
				}
			}
			switch len(files) {
			case 0:
				return usageErrorf("plan validate: missing FILE")
			case 1:
				v.Path = files[0]
			default:
				return usageErrorf("plan validate: want one FILE, got %d: %s", len(files), strings.Join(files, " "))
			}
			return v.Run(c.Context, a.stdout)
		},
	}
}

// PlanValidate is "gaffer plan validate": parse and check a plan file and
// print its phases.
type PlanValidate struct {
	Path  string // the plan file
	JSON  bool   // print JSON instead of a tree
	NoTDD bool   // turn the TDD check off
	Mode  string // auto (or empty), task or phased: as a profile's mode:
}

// Run reads and checks the plan and writes its phases to w. An invalid
// plan is an *ExitError with ExitInvalid wrapping the *state.PlanError
// (with JSON, the problems are printed too); a file that cannot be read
// (or a directory) is an ExitUsage error.
func (v PlanValidate) Run(_ context.Context, w io.Writer) error {
	src, err := profile.ReadInput(v.Path)
	if err != nil {
		return err
	}
	var opts []state.ParseOption
	if v.NoTDD {
		opts = append(opts, state.WithoutTDDCheck())
	}
	mode, ok := state.ParseExecMode(v.Mode)
	if !ok {
		return exitf(ExitUsage, "--mode must be auto, task or phased, not %q", v.Mode)
	}
	opts = append(opts, state.WithMode(mode))
	plan, perr := state.ParsePlan(v.Path, string(src), opts...)
	if v.JSON {
		if err := writePlanJSON(w, v.Path, plan, perr); err != nil {
			return err
		}
	} else if perr == nil {
		writePlanTree(w, v.Path, plan)
	}
	if perr != nil {
		return &ExitError{Code: ExitInvalid, Err: perr}
	}
	return nil
}

// writePlanTree prints the phases as a tree, each headed by its lanes
// (a lane's tasks run in order in one session; lanes run at once):
//
//	plan.md: 6 tasks in 4 phases (phased mode)
//	Phase 1 (2 lanes): 1a | 1b
//	├── 1a [test] Write tests for Add and Sub (calc_test.go)
//	└── 1b [test] Write tests for Parse (parse_test.go)
func writePlanTree(w io.Writer, path string, plan state.Plan) {
	fmt.Fprintf(w, "%s: %s in %s (%s mode)\n", path,
		plural(len(plan.Tasks), "task"), plural(len(plan.Phases), "phase"), plan.Mode)
	if plan.Whole {
		fmt.Fprintf(w, "%s: %s\n", path, nodes.WholePlanNote)
	}
	writePlanPhases(w, plan)
}

// writePlanPhases prints plan's phases, each with its lanes
// (state.Plan.LanesLine) and its tasks as a tree.
func writePlanPhases(w io.Writer, plan state.Plan) {
	for i := range plan.Phases {
		fmt.Fprintln(w, plan.LanesLine(i))
		tasks, _ := plan.PhaseTasks(i)
		for j, t := range tasks {
			branch := "├──"
			if j == len(tasks)-1 {
				branch = "└──"
			}
			line := branch + " " + t.ID
			if t.Type != state.TypeNone {
				line += " [" + t.Type.String() + "]"
			}
			if t.Title != "" {
				line += " " + t.Title
			}
			if len(t.Files) > 0 {
				line += " (" + strings.Join(t.Files, ", ") + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// planJSON is the output of plan validate --json.
type planJSON struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Mode     string          `json:"mode"`
	Whole    bool            `json:"whole,omitempty"` // no task headings: the whole plan is one task
	Phases   [][]string      `json:"phases"`
	Lanes    [][][]string    `json:"lanes"` // each phase's lanes, each lane's task ids
	Tasks    []taskJSON      `json:"tasks"`
	Problems []state.Problem `json:"problems"`
}

type taskJSON struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Type      string   `json:"type"`
	DependsOn []string `json:"depends_on"`
	Files     []string `json:"files"`
	Line      int      `json:"line"`
}

func writePlanJSON(w io.Writer, path string, plan state.Plan, perr error) error {
	out := planJSON{File: path, Valid: perr == nil, Mode: plan.Mode.String(), Whole: plan.Whole,
		Phases: [][]string{}, Lanes: [][][]string{}, Tasks: []taskJSON{}, Problems: []state.Problem{}}
	for i, ph := range plan.Phases {
		out.Phases = append(out.Phases, ph.TaskIDs)
		out.Lanes = append(out.Lanes, plan.PhaseLanes(i))
	}
	for _, t := range plan.Tasks {
		out.Tasks = append(out.Tasks, taskJSON{
			ID: t.ID, Title: t.Title, Type: t.Type.String(), Line: t.Line,
			DependsOn: nonNil(t.DependsOn), Files: nonNil(t.Files),
		})
	}
	var pe *state.PlanError
	if errors.As(perr, &pe) {
		out.Problems = pe.Problems
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("plan validate: write JSON: %w", err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
