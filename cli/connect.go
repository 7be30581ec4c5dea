package cli

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/daemon"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// local is a command's run host, opened in this process, with the
// terminal it works for.
type local struct {
	*host.Host
	io    IO
	front *front
	cmd   func(args ...string) string
	log   *slog.Logger
}

// hostOptions are what a command adds to the host it opens.
type hostOptions struct {
	kind    string           // the holding command, told on the socket; "" opens no socket
	metrics *metrics.Metrics // times checkpoint writes; nil: none
	ask     answerer         // asks for approval instead of the terminal (demo)
	setup   *profile.Setup   // the setup that checked the run this command starts; nil: newSetup's
	front   host.Front       // the runs' front instead of the terminal (serve's noticer)
	dir     string           // the local directory instead of storeOf's (serve --host-id)
	shared  bool             // a database store opened beside its holder (host.Config.Shared)
	remote  string           // the shared remote of a serve's runs (serve --remote)
	// maxSessions caps the agent sessions of all the host's runs at once
	// (serve --max-sessions); 0: no cap.
	maxSessions int
	// program names gaffer in the commands the host's messages suggest
	// (programFormatter); "": gaffer.
	program string
	// read is a command that only reads the store (list, status, …): it
	// delivers no notices (the processes that write them, or the next
	// that drives a run, do) and Badger compacts nothing in it, so that
	// it costs what it reads.
	read bool
}

// newSetup is the run setup of c's command: the terminal's output and
// keys, and --pace over the runs' stored pace when it is given.
func newSetup(c *ucli.Context, io IO) *profile.Setup {
	s := &profile.Setup{Out: io.Out, Keys: io.Keys, Getenv: io.Getenv, PauseSession: io.Hooks.Session}
	if c.IsSet("pace") {
		p := c.Duration("pace")
		s.Pace = &p
	}
	return s
}

// storeOf returns the store directory of c's flags (--store, or
// .git/gaffer of the repository's root) and the globals. For a database
// store (--store postgres://…) it returns the local directory that stands
// for the store on this host, .git/gaffer of the repository's root: the
// socket, process groups, transcripts and journal are kept beside it.
func storeOf(c *ucli.Context) (string, Globals, error) {
	g, storeSet, err := globalsOf(c)
	if err != nil {
		return "", g, err
	}
	if storeSet && !hoststore.IsURL(g.Store) {
		return g.Store, g, nil
	}
	repo, err := workspace.Open(g.Repo)
	if err != nil {
		return g.Store, g, nil // the default beside it: opening the repository says what is wrong
	}
	return filepath.Join(workspace.GitDir(repo.Root()), "gaffer"), g, nil
}

// openHost opens the repository and store of c's flags in this process
// (hoststore.Open) and, with o.kind, serves the store's socket to other
// processes (Host.Holder) while it is open.
func openHost(c *ucli.Context, io IO, o hostOptions) (*local, error) {
	dir, g, err := storeOf(c)
	if err != nil {
		return nil, err
	}
	if o.dir != "" {
		dir = o.dir
	}
	if _, ok := commandFlags(c)[remoteFlag]; ok && o.remote == "" {
		o.remote = c.String(remoteFlag) // gaffer fork --remote
	}
	if g.LogLevel == "" && c.Command != nil && c.Command.Name == "serve" {
		g.LogLevel = "info" // as serve's own log (opsLogger)
	}
	l := &local{io: io, cmd: programFormatter(cmp.Or(o.program, "gaffer"), g.Repo), log: g.Logger(io.Err)}
	if o.setup == nil {
		o.setup = newSetup(c, io)
	}
	l.front = &front{io: io, cmd: l.cmd, ask: o.ask}
	var hf host.Front = l.front
	if o.front != nil {
		hf = o.front
	}
	hc := host.Config{Dir: dir, Setup: o.setup, Front: hf, Logger: l.log, Cmd: l.cmd, ReproducibleDates: reproducibleDates(io.getenv),
		AfterCommit: afterCommitHook(io), AfterPublish: afterPushHook(io), AfterRestore: afterRestoreHook(io), Shared: o.shared, Remote: o.remote, MaxSessions: o.maxSessions}
	cfg := hoststore.Config{Config: hc, Repo: g.Repo, Store: dir, Notify: !o.read, NotifyEnv: io.keyenv, BeforeNotice: beforeNotifyHook(io),
		LimitMemory: io.LimitMemory && commandKind(c) != "serve"}
	if o.read {
		cfg.Reading = true
	} else {
		cfg.Telemetry, cfg.Getenv = profile.Telemetry(g.Repo, io.getenv), io.getenv
	}
	if o.metrics != nil {
		m := o.metrics
		cfg.WrapStore = func(s checkpoint.Store) checkpoint.Store { return metrics.InstrumentStore(s, m) }
	}
	if hoststore.IsURL(g.Store) {
		cfg.Store = g.Store
		if cfg.StoreOutageWait, err = storeOutageWait(io.getenv); err != nil {
			return nil, err
		}
	}
	h, err := hoststore.Open(c.Context, cfg)
	if err != nil {
		return nil, err
	}
	l.Host, l.front.states = h, h
	if o.kind == "" {
		return l, nil
	}
	if globalSet(c, "log-level") || globalSet(c, "log-format") {
		// Asked for logs: the run's events go there as serve logs its
		// runs' (without, the terminal shows the progress view alone).
		h.OnClose(h.Subscribe(daemon.EventLogger(l.log, "run interrupted at checkpoint")))
	}
	if _, _, err := socket.Listen(c.Context, h, h.Holder(o.kind), control.Info{Kind: o.kind, Version: io.version}); err != nil {
		// The store is ours, so the socket is only a convenience: say why
		// others cannot reach us and go on.
		l.log.Warn("control socket unavailable; other gaffer commands wait for this one", "err", err)
	}
	return l, nil
}

// holderOf returns the client of the process holding c's store when one
// answers on its socket, nil when none does.
func holderOf(c *ucli.Context) (*socket.Client, error) {
	dir, _, err := storeOf(c)
	if err != nil {
		return nil, err
	}
	return socket.HolderAt(c.Context, dir)
}

// lockedRetry is how long a read-only command waits for a store whose
// holder does not answer on the socket (it is starting or stopping).
const lockedRetry = 5 * time.Second

// withService calls f with the run service of c's store (socket.Connect):
// the process holding the store when one answers on its socket, the
// database's serves, this process otherwise (the store opened for f,
// with the terminal as its front). A command does not know which one it
// has. With read, a store held by a process that does not answer (yet,
// or any more) is waited for, briefly; without a store, read commands
// say there are no runs and the others that there is no run to act on.
func withService(c *ucli.Context, io IO, read bool, f func(svc host.Service, cmd func(...string) string) error) error {
	dir, g, err := storeOf(c)
	if err != nil {
		return err
	}
	cmd := commandFormatter(g.Repo)
	return socket.Connect(c.Context, socket.Connection{
		Dir: dir, Read: read, HeldWait: lockedRetry,
		Missing: func() error {
			dir, err := missingStore(c)
			if err != nil || dir != "" {
				return cmp.Or(err, noRuns(dir))
			}
			return nil
		},
		Database: func(context.Context) (host.Service, func(), error) { return viaDatabase(c, io) },
		Open: func(context.Context) (host.Service, func(), error) {
			kind := commandKind(c)
			if read {
				// Read-only, beside other readers: it serves no socket,
				// where a command that writes would find it.
				kind = ""
			}
			l, err := openHost(c, io, hostOptions{kind: kind, read: read})
			if err != nil {
				return nil, nil, err
			}
			if read {
				// With the store held, no process answers on its socket:
				// one a killed holder left goes, as a holder's Listen
				// removes it.
				_, _ = control.RemoveStale(control.SocketPath(dir))
			}
			return l.Host, func() { _ = l.Close() }, nil
		},
	}, func(svc host.Service) error { return f(svc, cmd) })
}

// commandKind names c's command for the socket's other side.
func commandKind(c *ucli.Context) string {
	if c.Command != nil && c.Command.Name != "" {
		return c.Command.Name
	}
	return "run"
}

// commandFormatter formats gaffer commands for the user, with --repo
// when repo is not the current directory.
func commandFormatter(repo string) func(args ...string) string {
	return programFormatter("gaffer", repo)
}

// programFormatter is commandFormatter naming gaffer program (as typed:
// ./bin/gaffer) instead of gaffer.
func programFormatter(program, repo string) func(args ...string) string {
	return func(args ...string) string {
		parts := []string{program}
		if abs, err := filepath.Abs(repo); err == nil {
			if wd, _ := os.Getwd(); wd != abs && repoTop(wd) != abs {
				parts = append(parts, "--repo", quote(abs))
			}
		}
		return strings.Join(append(parts, args...), " ")
	}
}

func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"'$`\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// localGlobals are --repo and --store again on each workflow command, so
// that `gaffer resume --repo DIR` works as well as `gaffer --repo DIR
// resume` (urfave/cli reads global flags before the command only), and
// its help lists them; withTrailingGlobals adds the other global flags,
// hidden, to every command.
func localGlobals(flags ...ucli.Flag) []ucli.Flag {
	return append(flags,
		&ucli.StringFlag{Name: "repo", Usage: "the git repository (as the global --repo)"},
		&ucli.StringFlag{Name: "store", Usage: "the store directory (as the global --store)"},
	)
}

// withTrailingGlobals gives every command of cmds (and their
// subcommands) each global flag it does not define itself, hidden from
// its help and with no default or environment variable of its own: `gaffer
// serve --repo X` and `gaffer status --store S` mean what they mean
// before the command (globalsOf reads them).
func withTrailingGlobals(cmds []*ucli.Command) []*ucli.Command {
	for _, cmd := range cmds {
		has := map[string]bool{}
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				has[n] = true
			}
		}
		for _, gf := range globalFlags() {
			if n := gf.Names()[0]; !has[n] {
				cmd.Flags = append(cmd.Flags, &ucli.StringFlag{Name: n, Hidden: true, Usage: "as the global --" + n})
			}
		}
		withTrailingGlobals(cmd.Subcommands)
	}
	return cmds
}

// globalsOf reads the global flags, each given after the command taking
// precedence over the same flag before it (the innermost command's
// first); storeSet reports whether a store was given at all (flag or
// GAFFER_STORE).
func globalsOf(c *ucli.Context) (g Globals, storeSet bool, err error) {
	root := rootOf(c)
	if g, err = GlobalsFrom(root); err != nil {
		return g, false, err
	}
	storeSet = root.IsSet("store") && root.String("store") != "" // GAFFER_STORE= names none
	if c == root {
		return g, storeSet, nil
	}
	if v, ok := trailingGlobal(c, root, "repo"); ok {
		g.Repo = repoTop(v)
		if !storeSet { // the default store is the one of this repository
			g.Store = filepath.Join(workspace.GitDir(g.Repo), "gaffer")
		}
	}
	if v, ok := trailingGlobal(c, root, "store"); ok {
		g.Store, storeSet = v, true
		if !hoststore.IsURL(g.Store) {
			g.Store = filepath.Clean(g.Store)
		}
	}
	if v, ok := trailingGlobal(c, root, "profile"); ok {
		g.Profile = v
	}
	if v, ok := trailingGlobal(c, root, "log-level"); ok {
		if _, err := parseLevel(strings.ToLower(v)); err != nil {
			return g, false, err
		}
		g.LogLevel = strings.ToLower(v)
	}
	if v, ok := trailingGlobal(c, root, "log-format"); ok {
		if v = strings.ToLower(v); v != "text" && v != "json" {
			return g, false, usageErrorf("--log-format %q: want text or json", v)
		}
		g.LogFormat = v
	}
	return g, storeSet, nil
}

// rootOf is the application's context in c's lineage (c when none is).
func rootOf(c *ucli.Context) *ucli.Context {
	for _, l := range c.Lineage() {
		if isRoot(l) {
			return l
		}
	}
	return c
}

// globalSet reports whether global flag name was given, before the
// command or after it (or by its environment variable). A command's own
// copy of it hides the global one from c.IsSet.
func globalSet(c *ucli.Context, name string) bool {
	root := rootOf(c)
	_, after := trailingGlobal(c, root, name)
	return after || root.IsSet(name)
}

// trailingGlobal returns global flag name as given after a command of
// c's lineage below root, the innermost first.
func trailingGlobal(c, root *ucli.Context, name string) (string, bool) {
	for _, l := range c.Lineage() {
		if l == root || l.Command == nil {
			break
		}
		for _, f := range l.Command.Flags {
			if slices.Contains(f.Names(), name) && l.IsSet(name) {
				return l.String(name), true
			}
		}
	}
	return "", false
}

// reproducibleDates reports whether GAFFER_REPRODUCIBLE_DATES asks for
// commits dated one second after their parent (goldens, tests) instead of
// the time they are made.
func reproducibleDates(getenv func(string) string) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(getenv("GAFFER_REPRODUCIBLE_DATES")))
	return err == nil && v
}

// afterCommitHook is the kill test's hook: with io.Hooks.AfterCommit set,
// each commit is announced on the output and followed by that pause,
// before its checkpoint is written.
func afterCommitHook(io IO) func(string) {
	d := io.Hooks.AfterCommit
	if d <= 0 {
		return nil
	}
	return func(subject string) {
		fmt.Fprintf(io.Out, "gaffer-test: committed %s\n", subject)
		time.Sleep(d)
	}
}

// afterPushHook is the two-host test's hook: with io.Hooks.AfterPush set,
// each push of a commit to the shared remote is announced on the output
// and followed by that pause, before its checkpoint is written.
func afterPushHook(io IO) func(string) {
	d := io.Hooks.AfterPush
	if d <= 0 {
		return nil
	}
	return func(commit string) {
		fmt.Fprintf(io.Out, "gaffer-test: pushed %s\n", commit)
		time.Sleep(d)
	}
}

// beforeNotifyHook is the notification kill test's hook: with
// io.Hooks.BeforeNotify set, each notice's delivery is announced on the
// output and follows that pause (cut short when the host closes).
func beforeNotifyHook(io IO) func(context.Context, string, state.Notice) {
	d := io.Hooks.BeforeNotify
	if d <= 0 {
		return nil
	}
	return func(ctx context.Context, runID string, n state.Notice) {
		fmt.Fprintf(io.Out, "gaffer-test: notify %s %s\n", runID, n.Event)
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
}

// afterRestoreHook is the allow-dirty test's hook: with
// io.Hooks.AfterRestore set, putting the user's changes back is announced
// and followed by that pause, before the stash's ref is dropped and the
// checkpoint written.
func afterRestoreHook(io IO) func() {
	d := io.Hooks.AfterRestore
	if d <= 0 {
		return nil
	}
	return func() {
		fmt.Fprintln(io.Out, "gaffer-test: restored the user's changes")
		time.Sleep(d)
	}
}

// runStatus is the status a person is told of a run's checkpoint.
func runStatus(snap graph.Snapshot[state.ExecutionState]) state.RunStatus {
	return host.ViewStatus(snap)
}

// storeOutageWaitEnv names how long a database store's writes wait for a
// database that does not answer before the run stops resumably (serve
// requeues it); unset, postgres.DefaultOutageWait.
const storeOutageWaitEnv = "GAFFER_STORE_OUTAGE_WAIT"

// storeOutageWait reads storeOutageWaitEnv: 0 when unset, a usage error
// when it is not a positive duration.
func storeOutageWait(getenv func(string) string) (time.Duration, error) {
	v := getenv(storeOutageWaitEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usageErrorf("%s=%q: want a positive duration such as 30s or 2m", storeOutageWaitEnv, v)
	}
	return d, nil
}

// closeHost closes l's host. A store deleted while it was open replaces
// *err: it is what the user must know, and the resume an interrupted
// run's message offers cannot work without it.
func closeHost(l *local, err *error) {
	if cerr := l.Close(); cerr != nil {
		*err = &ExitError{Code: ExitFailure, Err: cerr}
	}
}
