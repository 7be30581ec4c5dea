package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/pool"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/inbox"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/serve"
)

// Config is a daemon's: how many runs it executes, where it listens and
// how it drains.
type Config struct {
	Workers        int // runs executed at once (pool.Config.Workers)
	MaxRunsPerRepo int // runs of one repository executing at once at most; 0: Workers
	// Hosts is the pool's part on a database store (its host id and
	// lease).
	Hosts pool.HostsConfig
	// SharedStore is a database store that every host counts its runs
	// from: each scrape reads them, so that a dashboard counts them once.
	SharedStore bool
	// MetricsAddr is where /metrics, /healthz and /readyz are served
	// (metrics.Listen: 127.0.0.1 unless it names a host).
	MetricsAddr string
	// InboxAddr is where the inbox's web pages are served, a host:port
	// to listen on as it is ("" for nowhere); InboxToken is the bearer
	// token they require ("" for none: then New refuses an address that
	// is not loopback, ":PORT" included, which would answer anyone).
	InboxAddr  string
	InboxToken string
	// DrainTimeout is how long running steps may take to reach their
	// checkpoint once the context ends.
	DrainTimeout time.Duration
	// Version is the program's, told on the control socket.
	Version string
	// Logger is the daemon's log; Out is where it tells a person where it
	// serves and how it stopped.
	Logger *slog.Logger
	Out    io.Writer
}

// ListenError is a listener the daemon could not open: Listener says which
// (MetricsListener, InboxListener, SocketListener) and Addr where it was
// to listen (the socket's path is not known before it listens: "").
type ListenError struct {
	Listener string
	Addr     string
	Err      error
}

// The listeners a ListenError names.
const (
	MetricsListener = "metrics"
	InboxListener   = "inbox"
	SocketListener  = "control socket"
)

func (e *ListenError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("%s: %v", e.Listener, e.Err)
	}
	return fmt.Sprintf("%s: listen %s: %v", e.Listener, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// Daemon is a service being set up (New) and then run (Run).
type Daemon struct {
	cfg     Config
	reg     *prometheus.Registry
	metrics *metrics.Metrics
	inbox   net.Listener // nil without Config.InboxAddr
}

// New makes the daemon of cfg and what must exist before its store opens:
// its metrics, and its inbox's listener, so that a busy port stops it
// before it starts. Close releases them when Run is not called.
func New(cfg Config) (*Daemon, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.InboxAddr != "" && cfg.InboxToken == "" && !inbox.Loopback(cfg.InboxAddr) {
		return nil, fmt.Errorf("daemon: the inbox's address %s is not loopback and it has no token: it would answer anyone (give InboxToken, or a 127.0.0.1 address)", cfg.InboxAddr)
	}
	reg, m, err := NewMetrics()
	if err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, reg: reg, metrics: m}
	if cfg.InboxAddr != "" {
		if d.inbox, err = net.Listen("tcp", cfg.InboxAddr); err != nil {
			return nil, &ListenError{Listener: InboxListener, Addr: cfg.InboxAddr, Err: err}
		}
	}
	return d, nil
}

// Metrics are the daemon's: the store its host opens times its writes
// into them (metrics.InstrumentStore).
func (d *Daemon) Metrics() *metrics.Metrics { return d.metrics }

// Close releases what New opened. Run closes it too; closing again does
// nothing.
func (d *Daemon) Close() {
	if d.inbox != nil {
		d.inbox.Close()
	}
}

// Run serves h's runs until ctx ends (SIGTERM or SIGINT), then drains: no
// new work, running steps finish to their checkpoint (at most
// Config.DrainTimeout), leases are released, and it returns nil. The runs
// execute under a context of their own: the signal drains them at their
// next checkpoint instead of cancelling them mid-step. h stays open: it is
// the caller's to close.
func (d *Daemon) Run(ctx context.Context, h *host.Host) error {
	defer d.Close()
	log := d.cfg.Logger
	defer h.Subscribe(d.metrics.Observe)()
	defer h.Subscribe(EventLogger(log, "run drained at checkpoint"))()
	d.countRuns(ctx, h)
	svc, err := pool.New(h, pool.Config{Workers: d.cfg.Workers, MaxRunsPerRepo: d.cfg.MaxRunsPerRepo, Logger: log, Gauges: d.metrics, Hosts: d.cfg.Hosts})
	if err != nil {
		return err
	}
	queue := svc.Queue()
	defer h.Subscribe(queue.Observe)()

	ln, err := metrics.Listen(d.cfg.MetricsAddr)
	if err != nil {
		return &ListenError{Listener: MetricsListener, Addr: d.cfg.MetricsAddr, Err: err}
	}
	stopSocket, sock, err := socket.Listen(ctx, h, svc, control.Info{Kind: "serve", Version: d.cfg.Version})
	if err != nil {
		ln.Close()
		return &ListenError{Listener: SocketListener, Err: err}
	}
	runCtx, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRuns()
	svcCtx, stopSvc := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	serveHTTP(svcCtx, &wg, ln, metrics.Handler(d.reg, ready(queue)), "metrics", log)
	inboxURL, stopInbox, err := d.serveInbox(svcCtx, &wg, svc, h)
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
	d.announce(h, sock, ln.Addr(), inboxURL, len(queue.Status().Queued))

	<-ctx.Done()
	log.Info("draining", "timeout", d.cfg.DrainTimeout)
	queue.Drain(d.cfg.DrainTimeout)
	stop()
	left := queue.Status().Queued
	log.Info("stopped", "left_for_next_start", len(left))
	fmt.Fprintf(d.cfg.Out, "gaffer serve: stopped; %d run(s) resume at the next start\n", len(left))
	return nil
}

// countRuns sets the runs gauge from h's runs and, on a shared store,
// has every scrape count them again.
func (d *Daemon) countRuns(ctx context.Context, h *host.Host) {
	if counts, err := CountRuns(ctx, h); err == nil {
		d.metrics.SetRuns(counts)
	}
	if d.cfg.SharedStore {
		// Every host of the database counts its runs: each scrape reads
		// them (store="shared"), so that a dashboard counts them once.
		d.metrics.ProbeRuns(func(ctx context.Context) (map[string]int, error) { return CountRuns(ctx, h) }, d.cfg.Logger)
	}
}

// ready is /readyz's check: a draining queue, or one waiting to try a
// run again, is not ready.
func ready(queue serve.Queue) func() error {
	return func() error {
		st := queue.Status()
		if st.Draining {
			return errors.New("draining")
		}
		if st.Retrying != "" {
			return fmt.Errorf("waiting to try a run again: %s", st.Retrying)
		}
		return nil
	}
}

// serveHTTP serves handler on ln until ctx ends (wg counts it), logging
// a listener that stops otherwise.
func serveHTTP(ctx context.Context, wg *sync.WaitGroup, ln net.Listener, handler http.Handler, name string, log *slog.Logger) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := metrics.Serve(ctx, ln, handler); err != nil {
			log.Error(name+" listener stopped", "err", err)
		}
	}()
}

// serveInbox serves the inbox over svc until ctx ends (wg counts it);
// stop ends its event streams first. The URL is "" without an inbox.
func (d *Daemon) serveInbox(ctx context.Context, wg *sync.WaitGroup, svc host.Service, h *host.Host) (url string, stop func(), err error) {
	if d.inbox == nil {
		return "", func() {}, nil
	}
	ib, err := inbox.New(inbox.Config{Service: svc, Subscribe: h.Subscribe, Repo: h.Repo(),
		Transcripts: host.TranscriptDir(h.StoreDir()), Token: d.cfg.InboxToken, Logger: d.cfg.Logger})
	if err != nil {
		return "", nil, err
	}
	serveHTTP(ctx, wg, d.inbox, ib, "inbox", d.cfg.Logger)
	return fmt.Sprintf("http://%s/", d.inbox.Addr()), ib.Close, nil
}

// announce logs where the daemon serves and tells it on Out.
func (d *Daemon) announce(h *host.Host, sock string, metricsAddr net.Addr, inboxURL string, recovered int) {
	d.cfg.Logger.Info("serving", "store", h.StoreDir(), "socket", sock, "metrics", "http://"+metricsAddr.String()+"/metrics",
		"workers", d.cfg.Workers, "recovered", recovered, "pid", os.Getpid())
	fmt.Fprintf(d.cfg.Out, "gaffer serve: store %s, socket %s, metrics http://%s/metrics, %d worker(s)\n",
		h.StoreDir(), sock, metricsAddr, d.cfg.Workers)
	if inboxURL != "" {
		d.cfg.Logger.Info("inbox", "url", inboxURL)
		fmt.Fprintf(d.cfg.Out, "gaffer serve: inbox %s\n", inboxURL)
	}
}
