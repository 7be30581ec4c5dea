package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/workspace"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	ucli "github.com/urfave/cli/v2"
)

// opsHooks connects the workflow commands to the operations layer: the
// control socket of the process that holds the store, and the metrics. One
// value is shared by every command of an app (IO carries a pointer to it).
//
//   - In the process that opens the store, opened starts the control socket
//     beside it (and the metrics listener of --metrics-addr), so commands
//     in other terminals reach this process instead of failing on Badger's
//     lock.
//   - In a command the socket runs in process ("exec"), shared hands
//     openEnv the owner's env instead of opening the store again.
type opsHooks struct {
	version string
	// shared, when set, is the env of the process that holds the store:
	// openEnv returns a borrowed copy of it writing to the caller's IO.
	shared *env
	// serving is set by `gaffer serve`, which starts its own socket.
	serving bool

	// held is the run this process drives (run, approve, resume).
	held heldRun

	metricsOnce sync.Once
	reg         *prometheus.Registry
	m           *metrics.Metrics
	metricsErr  error
}

// metrics returns the process's registry and collectors, made once.
func (h *opsHooks) metrics() (*prometheus.Registry, *metrics.Metrics, error) {
	h.metricsOnce.Do(func() {
		h.reg = prometheus.NewRegistry()
		h.m, h.metricsErr = newProcessMetrics(h.reg)
	})
	return h.reg, h.m, h.metricsErr
}

// wantsMetrics reports whether command c serves metrics: serve always, run
// with --metrics-addr.
func (h *opsHooks) wantsMetrics(c *ucli.Context) bool {
	return h != nil && h.shared == nil && (h.serving || flagString(c, metricsAddrFlag) != "")
}

// instrument wraps the store so that checkpoint writes are timed into the
// metrics, when c serves them.
func (h *opsHooks) instrument(c *ucli.Context, s checkpoint.Store) checkpoint.Store {
	if !h.wantsMetrics(c) {
		return s
	}
	_, m, err := h.metrics()
	if err != nil {
		return s
	}
	return metrics.InstrumentStore(s, m)
}

// MetricsAddrFlag is the flag that serves /metrics, /healthz and /readyz
// from a run (always on in serve).
const metricsAddrFlag = "metrics-addr"

// openShared returns a borrowed env of the owner process writing to io.
func (h *opsHooks) openShared(io IO) *env {
	o := h.shared
	return &env{io: io, repo: o.repo, repoArg: o.repoArg, storeDir: o.storeDir, store: o.store,
		runner: o.runner, log: o.log, borrowed: true}
}

// opened runs in the process that has just opened the store for command c:
// it starts the control socket and, with --metrics-addr, the metrics
// listener. Their shutdown is added to e's closers.
func (h *opsHooks) opened(c *ucli.Context, e *env) error {
	if h == nil || h.serving || e.borrowed {
		return nil
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.Context))
	var wg sync.WaitGroup
	e.closers = append(e.closers, func() { cancel(); wg.Wait() })
	kind := "run"
	if c.Command != nil && c.Command.Name != "" {
		kind = c.Command.Name
	}
	e.closers = append(e.closers, h.holdCommand(c, kind))
	if c.IsSet("log-level") || c.IsSet("log-format") {
		// Asked for logs: the run's events go there as serve logs its
		// runs' (without, the terminal shows the progress view alone).
		e.closers = append(e.closers, e.runner.Subscribe(eventLogger(e.log, "run interrupted at checkpoint")))
	}
	srv, err := h.listen(e, kind, nil)
	if err != nil {
		// The store is ours, so the socket is only a convenience: say why
		// others cannot reach us and go on.
		e.log.Warn("control socket unavailable; other gaffer commands wait for this one", "err", err)
	} else {
		wg.Add(1)
		go func() { defer wg.Done(); _ = srv.Serve(ctx) }()
	}
	if addr := flagString(c, metricsAddrFlag); addr != "" {
		reg, m, err := h.metrics()
		if err != nil {
			return err
		}
		if counts, err := statusCounts(c.Context, e); err == nil {
			m.SetRuns(counts)
		}
		unsub := e.runner.Subscribe(m.Observe)
		e.closers = append(e.closers, unsub)
		ln, err := metrics.Listen(addr)
		if err != nil {
			return metricsListenError(addr, err)
		}
		fmt.Fprintf(e.io.Err, "metrics on http://%s/metrics\n", ln.Addr())
		wg.Add(1)
		go func() { defer wg.Done(); _ = metrics.Serve(ctx, ln, metrics.Handler(reg, nil)) }()
	}
	return nil
}

// newProcessMetrics registers gaffer's collectors and the Go and process
// collectors on reg.
func newProcessMetrics(reg *prometheus.Registry) (*metrics.Metrics, error) {
	m, err := metrics.New(reg)
	if err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

// listen starts the control socket of e's store. register adds its
// operations; nil means the ones a run, approve or resume process answers
// (exec, state and those of handleHeld). Each operation is registered once:
// control.Mux panics on a second registration.
func (h *opsHooks) listen(e *env, kind string, register func(*control.Mux)) (*control.Server, error) {
	mux := control.NewMux()
	if register == nil {
		register = func(mux *control.Mux) { h.handleHolder(mux, e) }
	}
	register(mux)
	return control.Listen(control.Config{
		Path:     control.SocketPath(e.storeDir),
		Mux:      mux,
		Info:     control.Info{Kind: kind, Version: h.version, Store: e.storeDir},
		ExitCode: ExitCode,
	})
}

// Control operations (see package control for the protocol).
const (
	opExec   = "exec"   // run a read-only command in the owner: args execArgs, result execResult
	opState  = "state"  // a run's watch view: args runArgs, result WatchView
	opAnswer = "answer" // approve or reject: args answerArgs, result answerResult
	opCancel = "cancel" // cancel a run: args runArgs, result answerResult
	opSubmit = "submit" // queue a run in serve: args RunOptions, result answerResult
	opResume = "resume" // queue a stopped run in serve: args runArgs, result answerResult
)

// execArgs is a command line to run in the owner process.
type execArgs struct {
	Argv []string `json:"argv"` // without the program name: ["status", "r-1", "--json"]
}

// execResult is what the command printed and how it ended.
type execResult struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Exit   int    `json:"exit"`
}

type runArgs struct {
	RunID string `json:"run_id"`
}

// readOnlyCommand reports whether a store holder runs the command for
// others in process.
func readOnlyCommand(name string) bool {
	switch name {
	case "status", "list", "history", "diff":
		return true
	}
	return false
}

// execHandler runs a read-only command against the owner's store and
// returns its output.
func (h *opsHooks) execHandler(owner *env) control.HandlerFunc {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		var a execArgs
		if err := json.Unmarshal(args, &a); err != nil || len(a.Argv) == 0 {
			return nil, exitf(ExitUsage, "exec: want a command line")
		}
		if !readOnlyCommand(a.Argv[0]) && !(a.Argv[0] == "plan" && len(a.Argv) > 1 && a.Argv[1] == "show") {
			return nil, exitf(ExitUsage, "exec: %q cannot run in the process that holds the store", a.Argv[0])
		}
		var out, errOut bytes.Buffer
		sub := &opsHooks{version: h.version, shared: owner}
		io := IO{Out: &out, Err: &errOut, Terminal: func() bool { return false }, ops: sub, Keys: owner.io.Keys}
		app := NewWithIO(h.version, io)
		err := app.RunContext(ctx, append([]string{"gaffer"}, a.Argv...))
		Report(&errOut, err)
		return execResult{Stdout: out.String(), Stderr: errOut.String(), Exit: ExitCode(err)}, nil
	}
}

// flagString returns the value of a flag the command may not define.
func flagString(c *ucli.Context, name string) string {
	for _, n := range c.FlagNames() {
		if n == name {
			return c.String(name)
		}
	}
	return ""
}

// client returns the control client of the store of c's global flags.
func controlClient(c *ucli.Context) (*control.Client, error) {
	g, storeSet, err := globalsOf(c)
	if err != nil {
		return nil, err
	}
	dir := g.Store
	if !storeSet {
		// The same directory openEnv opens: .git/gaffer of the repository's root.
		if repo, err := workspace.Open(g.Repo); err == nil {
			dir = filepath.Join(gitDir(repo.Root()), "gaffer")
		}
	}
	return control.NewClient(dir), nil
}

// remoteError turns a control error into the command's exit error.
func remoteError(err error) error {
	if errors.Is(err, control.ErrStranger) || errors.Is(err, control.ErrUnsafeDir) {
		return &ExitError{Code: ExitPrecondition, Err: err}
	}
	var re *control.RemoteError
	if errors.As(err, &re) {
		code := re.Exit
		if code == 0 {
			code = ExitFailure
		}
		return &ExitError{Code: code, Err: errors.New(re.Msg)}
	}
	return err
}

// logger returns a slog logger for the operations commands.
func opsLogger(c *ucli.Context, w io.Writer) *slog.Logger {
	g, err := GlobalsFrom(c)
	if err != nil {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	if g.LogLevel == "" {
		g.LogLevel = "info" // a service's log is its only output
	}
	return g.Logger(w)
}

// handleHolder registers the operations of a run, approve or resume
// process holding e's store: exec, state and those of handleHeld.
func (h *opsHooks) handleHolder(mux *control.Mux, e *env) {
	mux.Handle(opExec, h.execHandler(e))
	mux.Handle(opState, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a runArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "state: %w", err)
		}
		return watchViewOf(ctx, e, a.RunID)
	})
	h.handleHeld(mux, e)
}
