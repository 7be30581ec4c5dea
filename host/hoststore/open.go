package hoststore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/internal/memlimit"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
	"github.com/gaffer-dev/gaffer/notify"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/telemetry"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Config opens a Host on its store.
type Config struct {
	// Config is the host's. Its Dir is the store's local directory: the
	// store directory itself (Dir "" takes Store), or for a database the
	// directory that stands for the store on this host. Shared and Remote
	// apply to a database store only.
	host.Config
	Repo  string // the repository's work tree
	Store string // the store directory, or a postgres:// URL (IsURL)
	// StoreOutageWait is how long a database store's writes wait for a
	// database that does not answer before the run stops resumably
	// (postgres.Options.OutageWait; 0 is its default).
	StoreOutageWait time.Duration
	// Reading opens a store directory for a command that only reads it:
	// read-only, beside other readers, where Badger can
	// (badger.Options.Reading): a write then fails. Such a host serves
	// no socket. A host that writes waits up to ReadersWait for the
	// readers to finish.
	Reading bool
	// Notify delivers the runs' notices (package notify) from this
	// process while it holds the store: after each checkpoint of a run,
	// and once at Open for every run's pending ones, to the targets of
	// the cursors' file beside the store. A shared host (Config.Shared)
	// delivers none: the holder does.
	Notify bool
	// NotifyEnv reads the variables the runs' notify targets name (their
	// secrets; notify.Config.Getenv); nil: os.Getenv.
	NotifyEnv func(string) string
	// BeforeNotice, when set, is called before each delivery
	// (notify.Config.Before: the kill test's pause).
	BeforeNotice func(ctx context.Context, runID string, n state.Notice)
	// Telemetry, when set and on (telemetry.Config.On), sends the spans
	// of the runs this process drives to an OTLP endpoint; Getenv reads
	// the standard OTEL_* variables (os.Getenv when nil).
	Telemetry *telemetry.Config
	Getenv    func(string) string
	// LimitMemory keeps the heap of the process that drives runs on this
	// host near what it holds, for the rest of the process (the store's
	// close compacts too): a soft memory limit (package memlimit), unless
	// GOMEMLIMIT is set. A host that only reads (Reading) sets none.
	LimitMemory bool
}

// ReadersWait is how long opening a store directory for writing waits
// for the commands reading it (each holds it as long as it reads, a
// tenth of a second for a list of 10,000 runs) before it is refused as
// held.
const ReadersWait = 10 * time.Second

// Open opens the repository and the store of cfg and the Host on them
// (host.New), which ends what a killed gaffer process left behind (git
// lock files, agents' process groups) and compiles the workflow; then,
// holding the store, it sweeps the temporary directories those agents
// worked in (sweepTemp).
func Open(ctx context.Context, cfg Config) (*host.Host, error) {
	repo, err := workspace.Open(cfg.Repo)
	if err != nil {
		return nil, errorf(host.Refused, "open repository %s: %w", cfg.Repo, err)
	}
	dir := cfg.Store
	if IsURL(cfg.Store) {
		dir = cfg.Dir
		if dir == "" {
			return nil, errorf(host.Refused, "store %s: no local directory to keep its socket and logs beside", cfg.Store)
		}
	} else {
		cfg.Shared, cfg.Remote = false, "" // nothing to share, nothing to push
	}
	cfg.Dir = dir
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	tracing := cfg.Telemetry != nil && !cfg.Reading && cfg.Telemetry.On(getenv)
	cfg.TraceContent = tracing && cfg.Telemetry.Content
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	store, closeStore, err := openStore(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	restrictStore(dir)
	h, err := host.New(cfg.Config, repo, store, func() error {
		err := closeStore()
		restrictStore(dir)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !cfg.Shared {
		sweepTemp(h.Logger())
	}
	if cfg.Notify && !cfg.Shared {
		if err := startNotify(h, notify.Config{Getenv: cfg.NotifyEnv, Before: cfg.BeforeNotice}); err != nil {
			h.Close()
			return nil, err
		}
	}
	if tracing {
		if err := startTelemetry(ctx, h, *cfg.Telemetry, getenv); err != nil {
			h.Close()
			return nil, err
		}
	}
	if cfg.LimitMemory && !cfg.Reading {
		_ = memlimit.Start(getenv, memlimit.Default, time.Second)
	}
	return h, nil
}

// sweepTemp removes the temporary directories of every gaffer process of
// this user's that is gone (killed with SIGKILL, say; see package tmpdir),
// after host.New ended the agents that ran in them. Logged, not shown:
// they are no one's work. One that will not go is kept; the command goes
// on. A shared host does not sweep: what was left is the holder's to end.
func sweepTemp(log *slog.Logger) {
	removed, err := tmpdir.Sweep("")
	for _, d := range removed {
		log.Info("removed a temporary directory left by a killed gaffer process", "dir", d)
	}
	if err != nil {
		log.Warn("could not remove temporary directories left by killed gaffer processes", "err", err)
	}
}

// startTelemetry subscribes the tracer of tc to h's runs, when tc is on;
// the host's Close flushes the spans, within a bounded wait. Off, nothing
// is created.
func startTelemetry(ctx context.Context, h *host.Host, tc telemetry.Config, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	t, err := telemetry.Start(ctx, tc, telemetry.Options{Dir: h.StoreDir() + ".telemetry", Getenv: getenv})
	if err != nil || t == nil {
		return err
	}
	unsubscribe := h.Subscribe(t.Observe)
	h.OnTraceLink(t.Link)
	h.OnClose(func() {
		unsubscribe()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			h.Logger().Warn("telemetry: spans not sent", "err", err)
		}
	})
	return nil
}

// openStore opens the store of cfg, whose local directory is dir, and
// returns what closes it.
func openStore(ctx context.Context, cfg Config, dir string) (checkpoint.Store, func() error, error) {
	if IsURL(cfg.Store) {
		return openURLStore(ctx, cfg.Store, dir, !cfg.Shared, cfg.StoreOutageWait)
	}
	// A command that writes waits, briefly and saying so, for the
	// commands reading the store (opened read-only, beside each other).
	front := cfg.Front
	if front == nil {
		front = host.Quiet{}
	}
	store, err := badger.Open(dir, badger.Options{SyncWrites: true, Reading: cfg.Reading, WaitForReaders: ReadersWait,
		OnWait: func() { front.Notice("gaffer: waiting for the gaffer commands reading the store to finish…") }})
	if errors.Is(err, checkpoint.ErrLocked) {
		return nil, nil, errorf(host.Held, "store %s is in use by %s; wait for it to finish or stop it", dir, lockHolder(dir))
	}
	if errors.Is(err, checkpoint.ErrCorrupt) || errors.Is(err, checkpoint.ErrForeignStore) {
		// The store's own message names the directory and the fix.
		return nil, nil, &host.Error{Code: host.Refused, Err: err}
	}
	if ioerr.Machine(err) {
		// A full or failing disk is not a damaged store: nothing is lost.
		return nil, nil, errorf(host.Machine, "%s; free space on its disk (or fix the disk), then run the command again (a stopped run continues with %s)",
			strings.TrimPrefix(err.Error(), "checkpoint: "), "gaffer resume")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	return store, store.Close, nil
}

// startNotify starts delivering the runs' notices of h (Config.Notify): a
// run's checkpoint pokes the deliverer, which reads the run's outbox on
// its own goroutine, so a step never waits for a delivery. The host's
// Close flushes it, within its bounded wait, before the store closes.
func startNotify(h *host.Host, nc notify.Config) error {
	if nc.Cursor == "" {
		nc.Cursor = notify.CursorFile(h.StoreDir())
	}
	if nc.Logger == nil {
		nc.Logger = h.Logger()
	}
	store := h.Store()
	nc.Load = func(ctx context.Context, runID string) (state.ExecutionState, error) {
		snap, err := h.State(ctx, host.RunRequest{RunID: runID})
		return snap.State, err
	}
	nc.Runs = func(ctx context.Context) ([]string, error) {
		infos, err := store.Runs(ctx)
		ids := make([]string, len(infos))
		for i, in := range infos {
			ids[i] = in.RunID
		}
		return ids, err
	}
	d, err := notify.Start(nc)
	if err != nil {
		return err
	}
	unsubscribe := h.Subscribe(func(e graph.Event) {
		if e.Kind == graph.CheckpointSaved {
			d.Poke(e.RunID)
		}
	})
	h.OnClose(func() { unsubscribe(); d.Close() })
	return nil
}

// errorf returns a *host.Error of code with a formatted cause (%w works).
func errorf(code host.Code, format string, args ...any) error {
	return &host.Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// lockHolder names the process holding Badger's directory lock, from the
// pid Badger writes in its LOCK file.
func lockHolder(dir string) string {
	name, _ := os.Hostname()
	b, err := os.ReadFile(filepath.Join(dir, "LOCK"))
	if err != nil {
		return "another gaffer process on host " + name
	}
	return fmt.Sprintf("pid %s on host %s", strings.TrimSpace(string(b)), name)
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

// restrictStore makes the store directory 0700 and its files 0600,
// whatever the umask was when they were made: Badger makes its LOCK and
// table files 0666 less the umask. It runs when the store is opened and
// closed; files Badger makes in between keep their mode until then,
// inside the 0700 directory, which no other user can enter. Errors are
// ignored: the store works either way.
func restrictStore(dir string) {
	_ = os.Chmod(dir, 0o700)
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if en.Type().IsRegular() {
			_ = os.Chmod(filepath.Join(dir, en.Name()), 0o600)
		}
	}
}
