package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/serve"
	"github.com/gaffer-dev/gaffer/serve/pgqueue"
)

// HostsConfig is the PostgreSQL queue's part of a Config: on a
// database store the serves of many hosts claim runs from one jobs table
// (package serve/pgqueue), each under its host id.
type HostsConfig struct {
	// ID names this serve among the hosts; "" is DefaultHostID.
	ID string
	// Lease is how long a claimed run stays this host's without a
	// heartbeat (default pgqueue.DefaultLease, 30s): a host that dies
	// loses its runs to the others once it passes.
	Lease time.Duration
	// Poll is the polling fallback behind LISTEN/NOTIFY (default 2s).
	Poll time.Duration
}

// DefaultHostID is a serve's host id when none is given: the host's name
// and the process id, "NAME-PID", unique among live processes.
func DefaultHostID() string {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "host"
	}
	return fmt.Sprintf("%s-%d", name, os.Getpid())
}

// dbQueue makes the PostgreSQL queue of a host on a database store; ok is
// false for a store directory (the file journal's pool then).
func (p *Pool) dbQueue(cfg Config) (q serve.Queue, ok bool, err error) {
	db, isDB := p.h.Store().(*postgres.Store)
	if !isDB {
		return nil, false, nil
	}
	id := cfg.Hosts.ID
	if id == "" {
		id = DefaultHostID()
	}
	var x serve.Executor = executor{p}
	q, err = pgqueue.New(pgqueue.Config{DB: db.Pool(), HostID: id, Workers: cfg.Workers, Executor: x, Logger: cfg.Logger,
		Gauges: cfg.Gauges, KeyOf: p.keyOf, Group: p.key, MaxActive: cfg.MaxRunsPerRepo, Retry: retryOnHost, RetryAfter: time.Second, Lease: cfg.Hosts.Lease, Poll: cfg.Hosts.Poll,
		Abandon: p.abandon})
	return q, err == nil, err
}

// retryOnHost reports whether a job's error leaves the run to be tried
// again, here or on another host: the machine's (a full disk), or a run
// or work tree another process holds (another serve on this machine
// executes a run in the same work tree; a holder's lease has yet to
// expire).
func retryOnHost(err error) bool {
	return machineFault(err) || host.CodeOf(err) == host.Held
}

// machineFault reports whether a run stopped by err stopped for the
// machine's fault, not its own: a full or failing disk, a database store
// that cannot be reached, a model provider that is unreachable or answers
// 5xx or 429. serve puts such a run back in its queue (requeued, not
// failed) and tries it again after a pause.
func machineFault(err error) bool {
	return ioerr.Machine(err) || errors.Is(err, agent.ErrUnavailable) || errors.Is(err, checkpoint.ErrUnavailable)
}

// abandon fails a run its holders kept stopping with (a job taken over
// more than pgqueue's MaxTakeovers times): its status becomes failed,
// with err, which names the last holder, as its last error.
func (p *Pool) abandon(ctx context.Context, job serve.Job, err error) error {
	return p.h.Fail(ctx, job.RunID, err)
}

// finished reports whether a recovered job's run has already ended: its
// previous holder finished it and died before the queue heard (a serve
// killed between the run's last checkpoint and its journal's write).
func (p *Pool) finished(ctx context.Context, job serve.Job) bool {
	if !job.Recovered {
		return false
	}
	snap, err := p.h.State(ctx, host.RunRequest{RunID: job.RunID})
	return err == nil && snap.State.Status.Terminal() && !snap.State.Stash.Pending()
}

// ServingHosts counts the serves alive on the database store of h (their
// heartbeat is not past); 0 for a store directory. A command with no
// holder on this host goes through the database when one is alive.
func ServingHosts(ctx context.Context, h *host.Host) (int, error) {
	db, ok := h.Store().(*postgres.Store)
	if !ok {
		return 0, nil
	}
	var n int
	err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM serve_hosts WHERE lease_until > now()`).Scan(&n)
	return n, err
}

// serveName names the serve that executes what the pool queued, in its
// messages: this process, or for a client the serves of the database.
func (p *Pool) serveName() string {
	if p.client {
		return "a gaffer serve of the database store"
	}
	return fmt.Sprintf("gaffer serve (pid %d)", os.Getpid())
}
