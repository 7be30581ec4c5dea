package cli

import (
	"errors"
	"runtime"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/daemon"
	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/host/pool"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/profile/config"
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

// Serve runs `gaffer serve` (package daemon) until c's context ends
// (SIGTERM or SIGINT), then drains: no new work, running steps finish to
// their checkpoint (at most o.DrainTimeout), leases are released, and it
// returns nil.
func Serve(c *ucli.Context, io IO, o ServeOptions) (err error) {
	log := opsLogger(c, io.Err).With("component", "serve")
	inboxAddr, inboxToken, err := inboxFlags(o)
	if err != nil {
		return err
	}
	_, g, gerr := storeOf(c)
	d, err := daemon.New(daemon.Config{Workers: o.Workers, MaxRunsPerRepo: o.MaxPerRepo, Hosts: o.Hosts,
		SharedStore: gerr == nil && hoststore.IsURL(g.Store), MetricsAddr: o.MetricsAddr, InboxAddr: inboxAddr, InboxToken: inboxToken,
		DrainTimeout: o.DrainTimeout, Version: io.version, Logger: log, Out: io.Out})
	if err != nil {
		return serveError(err)
	}
	defer d.Close()
	// serve's runs are nobody's to watch or ask: its front is quiet.
	// Parallel runs share serve's output: each agent line names its run.
	setup := newSetup(c, io)
	setup.RunIDs = true
	l, err := openHost(c, io, hostOptions{metrics: d.Metrics(), front: noticer{io: io}, dir: o.Dir, remote: o.Remote, setup: setup, maxSessions: o.MaxSessions})
	if err != nil {
		return err
	}
	defer closeHost(l, &err)
	return serveError(d.Run(c.Context, l.Host))
}

// serveError turns a listener the daemon could not open into the
// command's exit error, naming the flag that moves it.
func serveError(err error) error {
	var le *daemon.ListenError
	if !errors.As(err, &le) {
		return err
	}
	switch le.Listener {
	case daemon.MetricsListener:
		return metricsListenError(le.Addr, le.Err)
	case daemon.InboxListener:
		if errors.Is(le.Err, syscall.EADDRINUSE) {
			return exitf(ExitPrecondition, "listen %s: address already in use; pass --ui-addr 127.0.0.1:PORT", le.Addr)
		}
		return exitf(ExitUsage, "--ui-addr: %w", le.Err)
	}
	return exitf(ExitLocked, "control socket: %w", le.Err)
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
