package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/host/pool"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/serve"
)

// DefaultServeMetricsAddr is where `gaffer serve` serves /metrics unless
// --metrics-addr says otherwise.
const defaultServeMetricsAddr = "127.0.0.1:9464"

// ServeOptions are the flags of `gaffer serve`.
type ServeOptions struct {
	Workers    int
	MaxPerRepo int // runs of one repository executing at once at most; 0: --workers
	// MaxSessions caps the agent sessions of all serve's runs at once,
	// their lanes together (DefaultMaxSessions when not given).
	MaxSessions  int
	MetricsAddr  string
	DrainTimeout time.Duration
	// UIAddr is where the inbox's web pages are served ("" for nowhere);
	// UITokenFile holds the bearer token they require, which an address
	// that is not loopback must have.
	UIAddr      string
	UITokenFile string
	// Hosts is the pool's part on a database store (--host-id,
	// --queue-lease), and Dir the local directory of a serve given a
	// --host-id there (cli/hosts.go).
	Hosts pool.HostsConfig
	Dir   string
	// Remote is the shared remote the runs' branches are pushed to on a
	// database store (--remote; host.Config.Remote).
	Remote string
}

func serveCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:  "serve",
		Usage: "own the store and execute submitted runs on a pool of workers, resuming interrupted ones",
		Flags: append([]ucli.Flag{
			&ucli.IntFlag{Name: "workers", Value: 1, EnvVars: []string{"GAFFER_WORKERS"}, Usage: "runs executed at once: each run works in its own work tree, so runs of one repository run in parallel (runs --in-place share the checkout and run one at a time)"},
			&ucli.IntFlag{Name: "max-sessions", Value: DefaultMaxSessions(), EnvVars: []string{"GAFFER_MAX_SESSIONS"}, Usage: "agent sessions at once across all the runs and their lanes (default: 4, or the number of CPUs when more)"},
			&ucli.IntFlag{Name: "max-runs-per-repo", EnvVars: []string{"GAFFER_MAX_RUNS_PER_REPO"}, Usage: "runs of one repository executed at once at most (default: gaffer.yaml's max_runs_per_repo, else --workers)"},
			&ucli.StringFlag{Name: metricsAddrFlag, Value: defaultServeMetricsAddr, EnvVars: []string{"GAFFER_METRICS_ADDR"}, Usage: "serve /metrics, /healthz and /readyz here (127.0.0.1 unless it names a host)"},
			&ucli.StringFlag{Name: "ui-addr", EnvVars: []string{"GAFFER_UI_ADDR"}, Usage: "serve the inbox's web pages (the runs, approve and reject) here, 127.0.0.1:PORT (127.0.0.1 unless it names a host)"},
			&ucli.StringFlag{Name: "ui-token-file", EnvVars: []string{"GAFFER_UI_TOKEN_FILE"}, Usage: "a file holding the bearer token the inbox requires; needed for a --ui-addr that is not loopback"},
			&ucli.DurationFlag{Name: "drain-timeout", Value: 30 * time.Second, EnvVars: []string{"GAFFER_DRAIN_TIMEOUT"}, Usage: "on SIGTERM, how long running steps may take to reach their checkpoint"},
		}, serveHostFlags()...),
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("serve takes no arguments")
			}
			o := ServeOptions{Workers: c.Int("workers"), MaxPerRepo: c.Int("max-runs-per-repo"), MaxSessions: c.Int("max-sessions"), MetricsAddr: c.String(metricsAddrFlag), DrainTimeout: c.Duration("drain-timeout"),
				UIAddr: c.String("ui-addr"), UITokenFile: c.String("ui-token-file")}
			if o.MaxPerRepo < 0 {
				return usageErrorf("--max-runs-per-repo %d: want at least 1", o.MaxPerRepo)
			}
			if !c.IsSet("max-runs-per-repo") {
				g, _, err := globalsOf(c)
				if err != nil {
					return err
				}
				if o.MaxPerRepo, err = configMaxRunsPerRepo(g.Repo, io.getenv); err != nil {
					return err
				}
			}
			if o.MaxSessions < 1 {
				return usageErrorf("--max-sessions %d: want at least 1", o.MaxSessions)
			}
			if o.Workers < 1 {
				return usageErrorf("--workers %d: want at least 1", o.Workers)
			}
			var err error
			if o.Hosts, o.Dir, err = serveHosts(c); err != nil {
				return err
			}
			if o.Remote = c.String(remoteFlag); o.Remote != "" {
				if _, g, err := storeOf(c); err == nil && !hoststore.IsURL(g.Store) {
					return usageErrorf("--%s needs a database store (--store postgres://…): a store directory serves one host", remoteFlag)
				}
			}
			return Serve(c, io, o)
		},
	}
}

// DefaultMaxSessions is serve's cap on agent sessions at once when
// --max-sessions is not given: 4 (one run's lanes at the default
// parallel), or the number of CPUs when more. Sessions wait on their
// model most of the time, but each runs the project's builds and tests
// on this machine: 4 runs of 4 lanes do not start 16 on a 2-core host
// unless asked.
func DefaultMaxSessions() int { return max(4, runtime.NumCPU()) }

// configMaxRunsPerRepo is the max_runs_per_repo of the configuration
// found for the repository in repoDir (gaffer.yaml, else the user's): what
// serve uses without --max-runs-per-repo; 0 (as many as --workers) when it
// does not say. A file that does not load is ExitInvalid.
func configMaxRunsPerRepo(repoDir string, getenv func(string) string) (int, error) {
	cfg, err := config.Load(repoDir, getenv)
	if err != nil {
		return 0, exitf(ExitInvalid, "%w", err)
	}
	return cfg.MaxRunsPerRepo(), nil
}

// Serve runs `gaffer serve` until c's context ends (SIGTERM or SIGINT),
// then drains: no new work, running steps finish to their checkpoint
// (at most o.DrainTimeout), leases are released, and it returns nil.
func Serve(c *ucli.Context, io IO, o ServeOptions) (err error) {
	log := opsLogger(c, io.Err).With("component", "serve")
	ui, err := listenInbox(o)
	if err != nil {
		return err
	}
	if ui.ln != nil {
		defer ui.ln.Close()
	}
	reg, m, err := newProcessMetrics()
	if err != nil {
		return err
	}
	// serve's runs are nobody's to watch or ask: its front is quiet.
	// Parallel runs share serve's output: each agent line names its run.
	setup := newSetup(c, io)
	setup.RunIDs = true
	l, err := openHost(c, io, hostOptions{metrics: m, front: noticer{io: io}, dir: o.Dir, remote: o.Remote, setup: setup, maxSessions: o.MaxSessions})
	if err != nil {
		return err
	}
	defer closeHost(l, &err)
	defer l.Subscribe(m.Observe)()
	defer l.Subscribe(eventLogger(log, "run drained at checkpoint"))()
	if counts, err := statusCounts(c.Context, l); err == nil {
		m.SetRuns(counts)
	}
	if _, g, err := storeOf(c); err == nil && hoststore.IsURL(g.Store) {
		// Every host of the database counts its runs: each scrape reads
		// them (store="shared"), so that a dashboard counts them once.
		m.ProbeRuns(func(ctx context.Context) (map[string]int, error) { return statusCounts(ctx, l) }, log)
	}
	svc, err := pool.New(l.Host, pool.Config{Workers: o.Workers, MaxRunsPerRepo: o.MaxPerRepo, Logger: log, Gauges: m, Hosts: o.Hosts})
	if err != nil {
		return err
	}
	queue := svc.Queue()
	defer l.Subscribe(queue.Observe)()

	ln, err := metrics.Listen(o.MetricsAddr)
	if err != nil {
		return metricsListenError(o.MetricsAddr, err)
	}
	stopSocket, sock, err := socket.Listen(c.Context, l.Host, svc, control.Info{Kind: "serve", Version: io.version})
	if err != nil {
		ln.Close()
		return exitf(ExitLocked, "control socket: %w", err)
	}

	// Runs execute under their own context: a signal drains them at their
	// next checkpoint instead of cancelling them mid-step.
	runCtx, stopRuns := context.WithCancel(context.WithoutCancel(c.Context))
	defer stopRuns()
	svcCtx, stopSvc := context.WithCancel(context.WithoutCancel(c.Context))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ready := func() error {
			st := queue.Status()
			if st.Draining {
				return errors.New("draining")
			}
			if st.Retrying != "" {
				return fmt.Errorf("waiting to try a run again: %s", st.Retrying)
			}
			return nil
		}
		if err := metrics.Serve(svcCtx, ln, metrics.Handler(reg, ready)); err != nil {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	inboxURL, stopInbox, err := ui.serve(svcCtx, &wg, svc, l.Host, log)
	if err != nil {
		stopSvc()
		stopSocket()
		wg.Wait()
		return err
	}
	stop := func() { stopInbox(); stopSvc(); stopSocket(); wg.Wait() }
	if err := queue.Start(runCtx); err != nil {
		stop()
		return err
	}
	st := queue.Status()
	log.Info("serving", "store", l.StoreDir(), "socket", sock, "metrics", "http://"+ln.Addr().String()+"/metrics",
		"workers", o.Workers, "recovered", len(st.Queued), "pid", os.Getpid())
	fmt.Fprintf(io.Out, "gaffer serve: store %s, socket %s, metrics http://%s/metrics, %d worker(s)\n",
		l.StoreDir(), sock, ln.Addr(), o.Workers)
	if inboxURL != "" {
		log.Info("inbox", "url", inboxURL)
		fmt.Fprintf(io.Out, "gaffer serve: inbox %s\n", inboxURL)
	}

	<-c.Context.Done()
	log.Info("draining", "timeout", o.DrainTimeout)
	queue.Drain(o.DrainTimeout)
	stop()
	left := queue.Status().Queued
	log.Info("stopped", "left_for_next_start", len(left))
	fmt.Fprintf(io.Out, "gaffer serve: stopped; %d run(s) resume at the next start\n", len(left))
	return nil
}

// eventLogger logs the runtime's events with run, node and phase
// attributes: nodes starting and finishing at debug, phases, reviews and
// status changes at info, failures at error. A run cut off by its context
// (serve's drain, a cancel) is not a failure: it is logged at info as
// stopped (the message) at its last checkpoint.
func eventLogger(log *slog.Logger, stopped string) func(graph.Event) {
	var mu sync.Mutex
	seqs := map[string]uint64{} // the newest checkpoint of each run
	return func(ev graph.Event) {
		l := log.With("run", ev.RunID)
		cut := ev.Err != nil && (errors.Is(ev.Err, context.Canceled) || errors.Is(ev.Err, context.DeadlineExceeded) ||
			errors.Is(ev.Err, serve.ErrDrained) || errors.Is(ev.Err, serve.ErrCancelled))
		// Fenced: another host took the run over; this one's attempt
		// stops, and the run goes on there.
		fenced := errors.Is(ev.Err, checkpoint.ErrFenced)
		switch ev.Kind {
		case graph.CheckpointSaved:
			mu.Lock()
			seqs[ev.RunID] = max(seqs[ev.RunID], ev.Seq)
			mu.Unlock()
		case graph.NodeStarted:
			l.Debug("node started", "node", ev.Node, "step", ev.Step, "attempt", ev.Attempt)
		case graph.NodeFinished:
			var ie *graph.InterruptError
			switch {
			case errors.As(ev.Err, &ie):
				// Waiting for a human is no failure, and the plan (the
				// interrupt's payload) is for plan show, not the log.
				l.Info("waiting for approval", "node", ev.Node, "step", ev.Step)
			case cut:
				l.Debug("node interrupted", "node", ev.Node, "step", ev.Step, "duration", ev.Duration)
			case fenced:
				l.Info("node stopped: another host holds the run", "node", ev.Node, "step", ev.Step, "err", ev.Err)
			case ev.Err != nil:
				l.Error("node failed", "node", ev.Node, "step", ev.Step, "duration", ev.Duration, "err", ev.Err)
			default:
				l.Debug("node finished", "node", ev.Node, "step", ev.Step, "duration", ev.Duration)
			}
		case graph.NodeRetry:
			l.Warn("node retry", "node", ev.Node, "attempt", ev.Attempt, "err", ev.Err)
		case graph.RunFinished:
			mu.Lock()
			seq := max(seqs[ev.RunID], ev.Seq)
			delete(seqs, ev.RunID)
			mu.Unlock()
			switch {
			case cut:
				l.Info(stopped, "seq", seq)
			case fenced:
				l.Warn("run taken over by another host; this host stopped its attempt", "seq", seq, "err", ev.Err)
			case ev.Err != nil:
				l.Error("run failed", "seq", seq, "err", ev.Err)
			default:
				l.Info("run stopped", "status", fmt.Sprint(ev.Payload), "seq", seq)
			}
		case graph.Custom:
			switch p := ev.Payload.(type) {
			case events.PhaseFinished:
				l.Info("phase finished", "node", ev.Node, "phase", p.Phase, "attempt", p.Attempt, "iteration", p.Iteration,
					"outcome", p.Outcome, "duration", p.Duration)
			case events.Review:
				l.Info("review", "node", ev.Node, "phase", p.Phase, "iteration", p.Iteration, "approved", p.Approved)
			case events.RunStatus:
				l.Info("run status", "from", p.From, "to", p.To)
			}
		}
	}
}

// metricsListenError turns a failed metrics listener into the command's
// exit error: a port in use is a precondition, not a usage error.
func metricsListenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		if a, aerr := metrics.ListenAddr(addr); aerr == nil {
			addr = a
		}
		return exitf(ExitPrecondition, "listen %s: address already in use; pass --%s 127.0.0.1:PORT", addr, metricsAddrFlag)
	}
	return exitf(ExitUsage, "--%s: %w", metricsAddrFlag, err)
}
