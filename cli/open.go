package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/internal/procgroup"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
	ucli "github.com/urfave/cli/v2"
)

// env is what a command works with: the repository, the store and the
// compiled workflow. Close it.
type env struct {
	io       IO
	repo     *workspace.Repo
	repoArg  string // --repo as given, for the commands printed to the user
	storeDir string
	store    *badger.Store
	runner   *graph.Runner[state.ExecutionState]
	log      *slog.Logger
	pace     *time.Duration          // --pace given to this command: overrides the run's stored pace
	borrowed bool                    // the store belongs to the process answering on the control socket
	wt       *workspace.WorkTreeLock // held while this env executes a run (worktree_lock.go)
	closers  []func()                // run by Close before the store closes (ops_hooks.go)
}

// openEnv opens the repository of --repo and the store of --store (or
// .git/gaffer), and compiles the workflow graph.
func openEnv(c *ucli.Context, io IO) (*env, error) {
	if io.ops != nil && io.ops.shared != nil {
		return io.ops.openShared(io), nil
	}
	g, storeSet, err := globalsOf(c)
	if err != nil {
		return nil, err
	}
	repo, err := workspace.Open(g.Repo)
	if err != nil {
		return nil, exitf(ExitPrecondition, "open repository %s: %w", g.Repo, err)
	}
	dir := g.Store
	if !storeSet {
		dir = filepath.Join(gitDir(repo.Root()), "gaffer")
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	store, err := badger.Open(dir, badger.Options{SyncWrites: true})
	if errors.Is(err, checkpoint.ErrLocked) {
		return nil, exitf(ExitLocked, "store %s is in use by %s; wait for it to finish or stop it", dir, lockHolder(dir))
	}
	if errors.Is(err, checkpoint.ErrCorrupt) || errors.Is(err, checkpoint.ErrForeignStore) {
		// The store's own message names the directory and the fix.
		return nil, &ExitError{Code: ExitPrecondition, Err: err}
	}
	if ioerr.Machine(err) {
		// A full or failing disk is not a damaged store: nothing is lost.
		return nil, exitf(ExitFailure, "%s; free space on its disk (or fix the disk), then run the command again (a stopped run continues with %s)",
			strings.TrimPrefix(err.Error(), "checkpoint: "), "gaffer resume")
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// With the store's lock held no other gaffer process works on this
	// repository's runs: git locks a killed one left can go.
	if removed, err := nodes.RecoverGitLocks(repo.Root()); err != nil {
		store.Close()
		return nil, err
	} else if len(removed) > 0 {
		fmt.Fprintf(io.Err, "gaffer: removed git lock files left by a killed gaffer process: %s\n", strings.Join(removed, ", "))
	}
	// Likewise, agents' process groups a killed one left running are ended
	// before anything else happens.
	groups := procgroup.Open(dir + ".groups")
	if killed, err := groups.KillOrphans(); err != nil {
		store.Close()
		return nil, fmt.Errorf("end the agents a killed gaffer process left running: %w", err)
	} else if len(killed) > 0 {
		fmt.Fprintf(io.Err, "gaffer: killed agent process groups left running by a killed gaffer process: %v\n", killed)
	}
	restrictStore(dir)
	if g.LogLevel == "" && c.Command != nil && c.Command.Name == "serve" {
		g.LogLevel = "info" // as serve's own log (opsLogger)
	}
	e := &env{io: io, repo: repo, repoArg: g.Repo, storeDir: dir, store: store, log: g.Logger(io.Err)}
	if c.IsSet("pace") {
		p := c.Duration("pace")
		e.pace = &p
	}
	var warnOnce sync.Once
	opts := agentOptions{groups: groups, keys: io.Keys, logs: transcriptDir(dir), warn: func(msg string) {
		warnOnce.Do(func() { e.log.Warn(msg) })
	}}
	gr, err := nodes.Build(nodes.Config{Repo: repo, Drivers: sessionHook(io, driverFactory(io.Out, e.pace, opts)), Clock: time.Now, Logger: e.log,
		ReproducibleDates: reproducibleDates(os.Getenv), AfterCommit: afterCommitHook(io), AfterRestore: afterRestoreHook(io),
		Notice: func(msg string) { fmt.Fprintln(io.Err, "gaffer: "+msg) }})
	if err != nil {
		store.Close()
		return nil, err
	}
	e.runner, err = gr.Compile(graph.WithStore(io.ops.instrument(c, store)), graph.WithDurability(graph.Sync), graph.WithCodec(nodes.NewCodec()))
	if err != nil {
		store.Close()
		return nil, err
	}
	e.closers = append(e.closers, trackLive(e.runner)) // status tells a stopped run (stopped.go)
	if err := io.ops.opened(c, e); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *env) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
	if !e.borrowed {
		e.store.Close()
		restrictStore(e.storeDir)
	}
}

// lockHolder names the process holding Badger's directory lock, from the
// pid Badger writes in its LOCK file.
func lockHolder(dir string) string {
	host, _ := os.Hostname()
	b, err := os.ReadFile(filepath.Join(dir, "LOCK"))
	if err != nil {
		return "another gaffer process on host " + host
	}
	return fmt.Sprintf("pid %s on host %s", strings.TrimSpace(string(b)), host)
}

// driverFactory makes the agents' drivers from a run's stored config: one
// place for every driver kind: the script driver here, llm and cli in
// drivers.go. A non-nil pace replaces the run's stored pace for this
// process (resume --pace), without changing what is stored.
//
// Before it makes any driver of a run, the variables the run's profile
// names as keys leave this process's environment (KeyVault), and every
// driver's processes start from an environment without them (a CLI agent
// gets those its pass_env lists).
func driverFactory(out io.Writer, pace *time.Duration, opts agentOptions) nodes.DriverFactory {
	var mu sync.Mutex
	scripts := map[string]*agent.Script{}
	real := newRealDrivers(out, opts)
	plain := plainDriverFactory(out, pace, opts, real, &mu, scripts)
	var seq sync.Mutex
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		d, err := plain(role, cfg)
		if err != nil || d == nil || opts.logs == "" {
			return d, err
		}
		return &transcribed{inner: d, dir: opts.logs, mu: &seq,
			redact: secretRedactor(keyNames(cfg), real.getenv, os.Environ())}, nil
	}
}

// plainDriverFactory makes the drivers, without transcripts.
func plainDriverFactory(out io.Writer, pace *time.Duration, opts agentOptions, real *realDrivers, mu *sync.Mutex,
	scripts map[string]*agent.Script) nodes.DriverFactory {
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		if err := opts.keys.take(keyNames(cfg)); err != nil {
			return nil, err
		}
		kind := cfg.Agents.Role(string(role)).Driver
		switch kind {
		case "", "script":
			if cfg.ScriptPath == "" {
				return nil, fmt.Errorf("%w: the script driver needs --script", ErrUnsupportedDriver)
			}
			mu.Lock()
			sc, ok := scripts[cfg.ScriptPath]
			if !ok {
				var err error
				if sc, err = agent.LoadScript(cfg.ScriptPath); err != nil {
					mu.Unlock()
					return nil, err
				}
				scripts[cfg.ScriptPath] = sc
			}
			mu.Unlock()
			if (role == agent.RoleEvaluator || role == agent.RoleSummarizer || role == agent.RoleDoctor || role == agent.RoleReplanner) && !sc.Has(role) {
				return nil, nil
			}
			p := cfg.Pace
			if pace != nil {
				p = *pace
			}
			var stdout io.Writer
			if out != nil {
				stdout = redactingWriter{w: out, redact: secretRedactor(keyNames(cfg), real.getenv, os.Environ())}
			}
			return agent.NewScriptDriver(sc, agent.ScriptOptions{Pace: p, Stdout: stdout,
				Env: agentEnviron(cfg, nil, real.getenv), Groups: opts.groups, Warn: opts.warn}), nil
		}
		return real.driver(role, cfg, kind)
	}
}

// runStatus is the status a user sees: awaiting_approval while the run
// waits on the approval interrupt, the state's status otherwise.
func runStatus(snap graph.Snapshot[state.ExecutionState]) state.RunStatus {
	if snap.Interrupt != nil && !snap.State.Status.Terminal() {
		return state.RunAwaitingApproval
	}
	return snap.State.Status
}

// runSnap is a run's latest checkpoint with its store time.
type runSnap struct {
	snap graph.Snapshot[state.ExecutionState]
	at   time.Time
}

// runs returns the store's runs with their latest state, newest first.
func (e *env) runs(ctx context.Context) ([]runSnap, error) {
	infos, err := e.store.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []runSnap
	for _, in := range infos {
		snap, err := e.runner.State(ctx, in.RunID)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", in.RunID, err)
		}
		out = append(out, runSnap{snap: snap, at: snap.State.Run.CreatedAt})
	}
	slices.SortStableFunc(out, func(a, b runSnap) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.snap.RunID, a.snap.RunID)
	})
	return out, nil
}

// latest picks run arg (the newest run of any status without it) and
// reads its latest checkpoint, for the commands that show a run.
func (e *env) latest(ctx context.Context, arg string) (string, graph.Snapshot[state.ExecutionState], error) {
	id, err := e.pick(ctx, arg, "at all", func(state.RunStatus) bool { return true })
	if err != nil {
		return "", graph.Snapshot[state.ExecutionState]{}, err
	}
	snap, err := e.runner.State(ctx, id)
	if err != nil {
		return "", snap, e.runError(ctx, id, err)
	}
	return id, snap, nil
}

// pick returns arg, or the newest run for which fits is true.
func (e *env) pick(ctx context.Context, arg, what string, fits func(state.RunStatus) bool) (string, error) {
	if arg != "" {
		return arg, nil
	}
	rs, err := e.runs(ctx)
	if err != nil {
		return "", err
	}
	for _, r := range rs {
		if fits(runStatus(r.snap)) {
			return r.snap.RunID, nil
		}
	}
	return "", exitf(ExitPrecondition, "%w: no run %s in %s", ErrNoRun, what, e.storeDir)
}

// cmd formats a gaffer command for the user, with --repo when it is not
// the current directory.
func (e *env) cmd(args ...string) string {
	parts := []string{"gaffer"}
	if abs, err := filepath.Abs(e.repoArg); err == nil {
		if wd, _ := os.Getwd(); wd != abs && repoTop(wd) != abs {
			parts = append(parts, "--repo", quote(abs))
		}
	}
	return strings.Join(append(parts, args...), " ")
}

func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"'$`\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// afterCommitHook is the kill test's hook: with GAFFER_TEST_PAUSE_AFTER_COMMIT
// set to a duration, each commit is announced on the output and followed
// by that pause, before its checkpoint is written.
func afterCommitHook(io IO) func(string) {
	d, err := time.ParseDuration(os.Getenv("GAFFER_TEST_PAUSE_AFTER_COMMIT"))
	if err != nil || d <= 0 {
		return nil
	}
	return func(subject string) {
		fmt.Fprintf(io.Out, "gaffer-test: committed %s\n", subject)
		time.Sleep(d)
	}
}

// sessionHook is the recovery kill test's hook: with
// GAFFER_TEST_PAUSE_SESSION set to ROLE/PHASE/ATTEMPT ("none" for no
// pause), every session is announced on the output ("gaffer-test:
// session doctor/2/2"), and the one named is followed by a pause of
// GAFFER_TEST_PAUSE_FOR (default 30s) before it runs. Unset, f is
// returned unchanged.
func sessionHook(cio IO, f nodes.DriverFactory) nodes.DriverFactory {
	which := os.Getenv("GAFFER_TEST_PAUSE_SESSION")
	if which == "" {
		return f
	}
	d, err := time.ParseDuration(os.Getenv("GAFFER_TEST_PAUSE_FOR"))
	if err != nil || d <= 0 {
		d = 30 * time.Second
	}
	return func(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
		drv, err := f(role, cfg)
		if err != nil || drv == nil {
			return drv, err
		}
		return announced{inner: drv, out: cio.Out, which: which, pause: d}, nil
	}
}

// announced is the driver sessionHook wraps.
type announced struct {
	inner agent.Driver
	out   io.Writer
	which string
	pause time.Duration
}

func (a announced) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	name := fmt.Sprintf("%s/%d/%d", s.Role, s.Phase, s.Attempt)
	fmt.Fprintf(a.out, "gaffer-test: session %s\n", name)
	if name == a.which {
		time.Sleep(a.pause)
	}
	return a.inner.Run(ctx, s)
}

// afterRestoreHook is the allow-dirty test's hook: with
// GAFFER_TEST_PAUSE_AFTER_RESTORE set to a duration, putting the user's
// changes back is announced and followed by that pause, before the
// stash's ref is dropped and the checkpoint written.
func afterRestoreHook(io IO) func() {
	d, err := time.ParseDuration(os.Getenv("GAFFER_TEST_PAUSE_AFTER_RESTORE"))
	if err != nil || d <= 0 {
		return nil
	}
	return func() {
		fmt.Fprintln(io.Out, "gaffer-test: restored the user's changes")
		time.Sleep(d)
	}
}

// localGlobals are --repo and --store again on each workflow command, so
// that `gaffer resume --repo DIR` works as well as `gaffer --repo DIR
// resume` (urfave/cli reads global flags before the command only).
func localGlobals(flags ...ucli.Flag) []ucli.Flag {
	return append(flags,
		&ucli.StringFlag{Name: "repo", Usage: "the git repository (as the global --repo)"},
		&ucli.StringFlag{Name: "store", Usage: "the store directory (as the global --store)"},
	)
}

// globalsOf reads the global flags, with --repo and --store given after
// the command taking precedence; storeSet reports whether a store was
// given at all (flag or GAFFER_STORE).
func globalsOf(c *ucli.Context) (g Globals, storeSet bool, err error) {
	root := c
	for _, l := range c.Lineage() {
		if isRoot(l) {
			root = l
			break
		}
	}
	if g, err = GlobalsFrom(root); err != nil {
		return g, false, err
	}
	storeSet = root.IsSet("store")
	if c != root && c.IsSet("repo") {
		g.Repo = c.String("repo")
	}
	if c != root && c.IsSet("store") {
		g.Store, storeSet = filepath.Clean(c.String("store")), true
	}
	return g, storeSet, nil
}

// unfinished picks a run that has not finished (the newest when arg is "")
// and returns its latest snapshot; what says what the run is picked for.
func (e *env) unfinished(ctx context.Context, arg, what string) (string, graph.Snapshot[state.ExecutionState], error) {
	return e.pickUnfinished(ctx, arg, what, false)
}

// resumable is unfinished for resume, which also takes a finished run
// whose user's changes are still to be put back (a process killed in
// restore_user_changes).
func (e *env) resumable(ctx context.Context, arg string) (string, graph.Snapshot[state.ExecutionState], error) {
	return e.pickUnfinished(ctx, arg, "to resume", true)
}

func (e *env) pickUnfinished(ctx context.Context, arg, what string, stash bool) (string, graph.Snapshot[state.ExecutionState], error) {
	var zero graph.Snapshot[state.ExecutionState]
	fits := func(snap graph.Snapshot[state.ExecutionState]) bool {
		return !snap.State.Status.Terminal() || (stash && snap.State.Stash.Pending())
	}
	id := arg
	if id == "" {
		rs, err := e.runs(ctx)
		if err != nil {
			return "", zero, err
		}
		for _, r := range rs {
			if fits(r.snap) {
				id = r.snap.RunID
				break
			}
		}
		if id == "" {
			return "", zero, exitf(ExitPrecondition, "%w: no run %s in %s", ErrNoRun, what, e.storeDir)
		}
	}
	snap, err := e.runner.State(ctx, id)
	if err != nil {
		return "", zero, e.runError(ctx, id, err)
	}
	if !fits(snap) {
		return "", zero, exitf(ExitPrecondition, "run %s has already finished: %s", id, snap.State.Status)
	}
	if err := e.checkCommits(ctx, snap); err != nil {
		return "", zero, err
	}
	return id, snap, nil
}

// checkCommits refuses, with exit 8, a run whose store lost checkpoints
// that its commits in the branch prove existed (nodes.CheckCommits):
// going on from the older checkpoint would redo phases silently.
func (e *env) checkCommits(ctx context.Context, snap graph.Snapshot[state.ExecutionState]) error {
	if err := nodes.CheckCommits(ctx, e.repo, snap.State); err != nil {
		return &ExitError{Code: ExitPrecondition, Err: err}
	}
	return nil
}

// privateDir makes the store directory dir, when it is missing, with mode
// 0700 whatever the umask.
func privateDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	return nil
}

// restrictStore makes the store directory 0700 and its files 0600, whatever
// the umask was when they were made: Badger makes its LOCK and table files
// 0666 less the umask. It runs when the store is opened and closed; files
// Badger makes in between keep their mode until then, inside the 0700
// directory, which no other user can enter. Errors are ignored: the store
// works either way.
func restrictStore(dir string) {
	_ = os.Chmod(dir, 0o700)
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if en.Type().IsRegular() {
			_ = os.Chmod(filepath.Join(dir, en.Name()), 0o600)
		}
	}
}

// reproducibleDates reports whether GAFFER_REPRODUCIBLE_DATES asks for
// commits dated one second after their parent (goldens, tests) instead of
// the time they are made.
func reproducibleDates(getenv func(string) string) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(getenv("GAFFER_REPRODUCIBLE_DATES")))
	return err == nil && v
}
