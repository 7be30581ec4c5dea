package cli

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/cli/config"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/workspace"
	"github.com/prometheus/client_golang/prometheus"
	ucli "github.com/urfave/cli/v2"
)

// RunOptions are the flags of `gaffer run`.
type RunOptions struct {
	PlanFile    string
	Goal        string
	Driver      string // every role's driver; "" takes the profile's
	Model       string // every role's model; "" takes the profile's
	Profile     string // the profile (--profile, GAFFER_PROFILE); "" for the configuration's default
	Script      string
	AutoApprove bool
	AllowDirty  bool
	InPlace     bool // work in the user's checkout, not the run's own work tree
	Pace        time.Duration
	TrackerID   string
	RunID       string // fixed run id (tests); "" makes one
	Repo        string // submit: the submitter's work tree (repoKey), which serve checks is its own

	profile *runProfile // resolved before the store is opened; nil resolves in newRun
	planSrc []byte      // the plan file as first read: a pipe (--plan <(…)) reads once
}

// planSource reads the plan file once; later calls return what it read.
func (o *RunOptions) planSource() ([]byte, error) {
	if o.planSrc != nil {
		return o.planSrc, nil
	}
	b, err := readInput(o.PlanFile)
	if err != nil {
		return nil, err
	}
	o.planSrc = b
	return b, nil
}

func runCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "run",
		Usage:        "start a run: plan (or take --plan), ask for approval, run the phases",
		OnUsageError: onUsageError,
		Flags: localGlobals(
			&ucli.StringFlag{Name: "plan", Usage: "a plan file (skips the architect)"},
			&ucli.StringFlag{Name: "goal", Usage: "what to build (the architect writes the plan)"},
			&ucli.StringFlag{Name: "driver", EnvVars: []string{"GAFFER_DRIVER"}, Usage: "every agent's driver: script, llm or cli (default: the profile's)"},
			&ucli.StringFlag{Name: "model", EnvVars: []string{"GAFFER_MODEL"}, Usage: "every agent's model (default: the profile's)"},
			&ucli.StringFlag{Name: "script", EnvVars: []string{"GAFFER_SCRIPT"}, Usage: "the script driver's file (see agent/script/SCRIPT-FORMAT.md)"},
			&ucli.BoolFlag{Name: "auto-approve", EnvVars: []string{"GAFFER_AUTO_APPROVE"}, Usage: "run the plan without asking"},
			&ucli.BoolFlag{Name: "allow-dirty", EnvVars: []string{"GAFFER_ALLOW_DIRTY"}, Usage: "start on a work tree with uncommitted changes (with --in-place)"},
			&ucli.BoolFlag{Name: "in-place", EnvVars: []string{"GAFFER_IN_PLACE"}, Usage: "work in this checkout instead of the run's own work tree and branch (gaffer/<run-id>)"},
			&ucli.DurationFlag{Name: "pace", EnvVars: []string{"GAFFER_PACE"}, Usage: "pause before each agent action, to follow a run"},
			&ucli.StringFlag{Name: "tracker-id", EnvVars: []string{"GAFFER_TRACKER_ID"}, Usage: "an issue key for the execution directory's name"},
			&ucli.StringFlag{Name: "run-id", Hidden: true, Usage: "use this run id (tests)"},
		),
		Action: func(c *ucli.Context) error {
			o := RunOptions{
				PlanFile: c.String("plan"), Goal: c.String("goal"), Driver: c.String("driver"), Model: c.String("model"),
				Script: c.String("script"), AutoApprove: c.Bool("auto-approve"), AllowDirty: c.Bool("allow-dirty"),
				InPlace: c.Bool("in-place"), Pace: c.Duration("pace"), TrackerID: c.String("tracker-id"), RunID: c.String("run-id"),
			}
			if err := o.preflight(c); err != nil { // before the store exists: a bad call writes nothing
				return err
			}
			if err := o.precheckTree(c); err != nil { // before the store exists: a refused run writes nothing
				return err
			}
			return Run(c, io, o)
		},
	}
}

// Run starts a run in this process and drives it to its end or its first
// pause, with --metrics-addr serving its metrics meanwhile. A store held
// by `gaffer serve` is refused with the command that queues the run there.
func Run(c *ucli.Context, io IO, o RunOptions) (err error) {
	if o.RunID == "" {
		o.RunID = host.NewRunID(time.Now())
	}
	var m *metrics.Metrics
	var reg *prometheus.Registry
	addr := flagString(c, metricsAddrFlag)
	if addr != "" {
		var err error
		if reg, m, err = newProcessMetrics(); err != nil {
			return err
		}
	}
	l, err := openHost(c, io, hostOptions{kind: commandKind(c), metrics: m, run: &o})
	if err != nil {
		if ExitCode(err) == ExitLocked {
			if cl, cerr := holderOf(c); cerr == nil && cl != nil {
				info, perr := cl.Ping(c.Context)
				switch {
				case perr != nil:
				case info.Kind == "serve":
					return exitf(ExitLocked, "gaffer serve (pid %d) holds the store %s; queue the run there with "+
						"`gaffer run --detach` or `gaffer submit` (same flags)", info.PID, info.Store)
				default:
					_, g, _ := storeOf(c)
					// One process drives a store's runs: several at once are
					// serve's to run, each in its own work tree.
					return exitf(ExitLocked, "gaffer %s (pid %d) holds the store %s; wait for it to finish, or run several at once: "+
						"start `%s` and queue each run with `gaffer submit` (same flags)", info.Kind, info.PID, info.Store, commandFormatter(g.Repo)("serve"))
				}
			}
		}
		return err
	}
	defer closeHost(l, &err)
	if m != nil {
		if err := serveMetrics(c.Context, l, addr, reg, m); err != nil {
			return err
		}
	}
	out, err := l.Start(c.Context, o.spec())
	return report(io, l.cmd, out, err)
}

// checkTree refuses a work tree with uncommitted changes (for a run in
// place, unless o.AllowDirty: a run in its own work tree leaves the
// user's changes alone) and a repository without a commit to start from. It returns
// the run's own inputs that are untracked in the tree (the plan, the script,
// gaffer.yaml): they are not the user's changes.
func checkTree(ctx context.Context, repo *workspace.Repo, o RunOptions) ([]string, error) {
	st, err := repo.Status(ctx)
	if err != nil {
		return nil, exitf(ExitPrecondition, "read the work tree's status: %w", err)
	}
	inputs := runInputs(repo.Root(), st.Untracked, o.PlanFile, o.Script, filepath.Join(repo.Root(), config.RepoFile))
	if o.InPlace && !o.AllowDirty {
		if paths := host.DirtPaths(st, inputs); len(paths) > 0 {
			return nil, exitf(ExitPrecondition, "%w (%s: %s) in %s; commit or stash them, or pass --allow-dirty",
				host.ErrDirtyTree, host.Plural(len(paths), "path"), host.ListPaths(paths, 10), repo.Root())
		}
	}
	if err := checkHead(ctx, repo); err != nil {
		return nil, err
	}
	return inputs, nil
}

// checkHead refuses a repository without a commit to start from.
func checkHead(ctx context.Context, repo *workspace.Repo) error {
	if _, err := repo.Head(ctx); err != nil {
		return exitf(ExitPrecondition, "the repository has no commit to start from: %w; make one first", err)
	}
	return nil
}

// precheckTree runs checkTree before the store is opened, so that a run
// refused for its work tree creates no store. It checks only while it can
// take the work tree's lock: a tree another process works in is that
// process's to change, and Run names the holder. A run in its own work
// tree needs only a commit to start from. Whatever it cannot open is left
// to openHost to report.
func (o RunOptions) precheckTree(c *ucli.Context) error {
	g, _, err := globalsOf(c)
	if err != nil {
		return err
	}
	repo, err := workspace.Open(g.Repo)
	if err != nil {
		return nil
	}
	if !o.InPlace {
		return checkHead(c.Context, repo)
	}
	l, err := repo.LockWorkTree(o.RunID)
	if err != nil {
		return nil
	}
	defer l.Unlock()
	_, err = checkTree(c.Context, repo, o)
	return err
}

// runInputs returns the files among files (paths as given) that the run
// itself reads and that are untracked in the work tree at root: they are
// not the user's changes (see state.RunConfig.Inputs). untracked is the
// work tree's untracked files, relative to root.
func runInputs(root string, untracked []string, files ...string) []string {
	isUntracked := make(map[string]bool, len(untracked))
	for _, p := range untracked {
		isUntracked[p] = true
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	var out []string
	for _, f := range files {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		rel, err := filepath.Rel(realRoot, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		rel = filepath.ToSlash(rel)
		if isUntracked[rel] && !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}
