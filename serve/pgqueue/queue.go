package pgqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/serve"
)

// The channels the queue notifies and listens on.
const (
	jobsChannel   = "gaffer_jobs"   // a job was queued or released
	cancelChannel = "gaffer_cancel" // payload: the run to cancel
)

// Defaults of Config.
const (
	DefaultLease        = 30 * time.Second
	DefaultPoll         = 2 * time.Second
	DefaultMaxTakeovers = 5
)

// dbTimeout bounds each statement, so that a server that does not answer
// holds no worker for long.
const dbTimeout = 10 * time.Second

// Config configures a Queue.
type Config struct {
	// DB is the database store's pool (postgres.Store.Pool): its
	// search_path is the store's schema, migrated with the jobs table.
	DB *pgxpool.Pool
	// HostID names this host among those sharing the database; required.
	HostID   string
	Workers  int            // at least 1; default 1
	Executor serve.Executor // nil: a client, which cannot Start
	Logger   *slog.Logger
	// Gauges, optional, gets this host's worker count and the jobs
	// executing here (SetWorkers); the queue's length and the age of its
	// oldest job are every host's, read at scrape time when Gauges is a
	// QueueProber too.
	Gauges serve.Gauges
	// KeyOf, when set, gives the Key of a job claimed here (serve.Job's:
	// what it works on, on this host): two jobs with one key never
	// execute here at once. A job whose key is busy goes back to the
	// queue, and this host passes it over until one of its jobs ends.
	// Other hosts have work trees of their own.
	KeyOf func(serve.Job) string
	// Group is the Group of every job executed here (the repository), and
	// MaxActive, when above 0, how many execute here at once at most
	// (max_runs_per_repo).
	Group     string
	MaxActive int
	// Retry and RetryAfter are serve.Config's: a job whose error Retry
	// accepts goes back to the queue (for any host) and this host takes
	// no job for RetryAfter (default 5s).
	Retry      func(error) bool
	RetryAfter time.Duration
	// Lease is how long a claim lasts without a heartbeat (default 30s);
	// the heartbeat renews it every Lease/3 (or Poll, if shorter).
	Lease time.Duration
	// Poll is the polling fallback of LISTEN/NOTIFY (default 2s).
	Poll time.Duration
	// MaxTakeovers is how often a job may be taken over from a holder
	// whose lease expired (default 5); one more fails it.
	MaxTakeovers int
	// Abandon, when set, is called with a job over MaxTakeovers and the
	// error naming its last holder, to fail the run itself.
	Abandon func(ctx context.Context, job serve.Job, err error) error
	// NoListen turns LISTEN/NOTIFY off, leaving the polling (tests).
	NoListen bool
}

func (c *Config) validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("%w: no database", serve.ErrInvalidConfig)
	case c.HostID == "":
		return fmt.Errorf("%w: no host id", serve.ErrInvalidConfig)
	case c.Workers < 0:
		return fmt.Errorf("%w: %d workers", serve.ErrInvalidConfig, c.Workers)
	case c.MaxActive < 0:
		return fmt.Errorf("%w: at most %d runs", serve.ErrInvalidConfig, c.MaxActive)
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = 5 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.MaxTakeovers <= 0 {
		c.MaxTakeovers = DefaultMaxTakeovers
	}
	return nil
}

// ErrLost is the context cause of a job whose lease another host took:
// the job's executor stops its attempt, and the run goes on there.
var ErrLost = errors.New("pgqueue: the job's lease expired and another host took it")

// active is a job this host executes.
type active struct {
	job    serve.Job
	claim  int64
	cancel context.CancelCauseFunc
}

// Queue is serve.Queue in PostgreSQL.
type Queue struct {
	cfg Config

	mu       sync.Mutex
	active   map[string]*active
	busy     int               // workers holding a slot (claiming or executing)
	held     map[string]string // Key → the run executing here with it
	passed   map[string]bool   // runs passed over: their key was busy here
	draining bool
	paused   time.Time
	retrying string
	lastErr  map[string]string
	started  bool
	// claimsEmpty counts the claims that found nothing to do: an idle
	// queue makes one per worker per Poll, or per wake.
	claimsEmpty atomic.Int64

	wake   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup // workers
	bg     sync.WaitGroup // listener and heartbeat
	closed chan struct{}
}

var _ serve.Queue = (*Queue)(nil)

// New returns the queue of cfg; it touches the database only when used.
func New(cfg Config) (*Queue, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Queue{cfg: cfg, active: map[string]*active{}, lastErr: map[string]string{}, held: map[string]string{}, passed: map[string]bool{},
		wake: make(chan struct{}, cfg.Workers), stop: make(chan struct{}), closed: make(chan struct{})}, nil
}

// Start starts the workers, the heartbeat and the listener.
func (q *Queue) Start(ctx context.Context) error {
	if q.cfg.Executor == nil {
		return fmt.Errorf("%w: no executor", serve.ErrInvalidConfig)
	}
	// This host is alive for other processes once Start returns (serve
	// says so right after): its row is written here, not only by the
	// heartbeat, whose first beat may come later.
	name, _ := os.Hostname()
	q.beat(ctx, name)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("pgqueue: already started")
	}
	q.started = true
	bgCtx, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	q.bg.Add(1)
	go q.heartbeat(bgCtx)
	if !q.cfg.NoListen {
		q.bg.Add(1)
		go q.listen(bgCtx)
	}
	for range q.cfg.Workers {
		q.wg.Add(1)
		go q.worker(ctx)
	}
	go func() {
		q.wg.Wait()
		stopBg()
		q.bg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
		defer cancel()
		_, _ = q.cfg.DB.Exec(ctx, `DELETE FROM serve_hosts WHERE host_id = $1`, q.cfg.HostID)
		close(q.closed)
	}()
	q.gaugesLocked()
	q.probeGauges()
	return nil
}

// Wait waits for the workers to stop and the host's row to go.
func (q *Queue) Wait() {
	q.mu.Lock()
	started := q.started
	q.mu.Unlock()
	if started {
		<-q.closed
	}
}

// submitSQL is one statement: a new row, or a parked or failed run's row
// replaced; a queued or running one is left (no row returned:
// serve.ErrDuplicate). A job that carries no trace context (an answer)
// keeps the one its run was submitted with. The notification is sent at
// commit.
const submitSQL = `WITH j AS (
	INSERT INTO jobs AS j (run_id, kind, spec, answer, key, traceparent, tracestate) VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (run_id) DO UPDATE SET kind = excluded.kind, spec = excluded.spec, answer = excluded.answer, key = excluded.key,
		traceparent = CASE WHEN excluded.traceparent <> '' THEN excluded.traceparent ELSE j.traceparent END,
		tracestate = CASE WHEN excluded.traceparent <> '' THEN excluded.tracestate ELSE j.tracestate END,
		state = 'queued', ord = nextval('job_order'), queued_at = now(), claimed_by = NULL, lease_until = NULL, recovered = false,
		takeovers = 0, last_holder = NULL, cancel = false, error = NULL
	WHERE j.state IN ('parked', 'failed')
	RETURNING run_id
)
SELECT run_id, pg_notify('` + jobsChannel + `', run_id) FROM j`

// Submit queues job for any host.
func (q *Queue) Submit(job serve.Job) error {
	q.mu.Lock()
	draining := q.draining
	q.mu.Unlock()
	if draining {
		return serve.ErrDraining
	}
	if job.RunID == "" {
		return fmt.Errorf("%w: job without a run id", serve.ErrInvalidConfig)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	var id string
	err := q.cfg.DB.QueryRow(ctx, submitSQL, job.RunID, string(job.Kind), []byte(job.Spec), []byte(job.Answer), job.Key, job.TraceParent, job.TraceState).Scan(&id, new(any))
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %s", serve.ErrDuplicate, job.RunID)
	}
	if err != nil {
		return fmt.Errorf("pgqueue: submit run %s: %w", job.RunID, err)
	}
	q.mu.Lock()
	delete(q.lastErr, job.RunID)
	q.mu.Unlock()
	return nil
}

// Answer queues the answer to a parked run's interrupt.
func (q *Queue) Answer(runID string, answer any) error {
	b, err := json.Marshal(answer)
	if err != nil {
		return fmt.Errorf("pgqueue: encode answer: %w", err)
	}
	return q.Submit(serve.Job{RunID: runID, Kind: serve.JobAnswer, Answer: b})
}

// Cancel removes the run's job when it is not executing, or flags it and
// notifies the host executing it (and cancels it here, if this is that
// host). It reports whether it found a job of the run.
func (q *Queue) Cancel(runID string) bool {
	q.mu.Lock()
	if a := q.active[runID]; a != nil {
		a.cancel(serve.ErrCancelled)
	}
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	var n int
	err := q.cfg.DB.QueryRow(ctx, `WITH d AS (
	DELETE FROM jobs WHERE run_id = $1 AND state <> 'running' RETURNING run_id
), u AS (
	UPDATE jobs SET cancel = true WHERE run_id = $1 AND state = 'running' RETURNING pg_notify('`+cancelChannel+`', run_id)
)
SELECT (SELECT count(*) FROM d) + (SELECT count(*) FROM u)`, runID).Scan(&n)
	if err != nil {
		q.cfg.Logger.Error("pgqueue: cancel", "run", runID, "err", err)
		return false
	}
	return n > 0
}

// Observe cancels, while draining, an executing run whose checkpoint was
// just saved (cause serve.ErrDrained).
func (q *Queue) Observe(e graph.Event) {
	if e.Kind != graph.CheckpointSaved {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.draining {
		return
	}
	if a := q.active[e.RunID]; a != nil {
		a.cancel(serve.ErrDrained)
	}
}

// Drain stops taking work and waits for the executing runs to reach a
// checkpoint, at most timeout, then cancels the rest. The jobs cut off
// are released to the queue at once, for any host.
func (q *Queue) Drain(timeout time.Duration) {
	q.mu.Lock()
	if !q.draining {
		q.draining = true
		close(q.stop)
	}
	q.mu.Unlock()
	serve.WaitOrCut(timeout, q.wg.Wait, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		for _, a := range q.active {
			a.cancel(serve.ErrDrained)
		}
	})
}

// Status reads the jobs queued, executing and parked on every host; the
// worker counts are this host's. When the database does not answer, the
// jobs are this host's executing ones.
func (q *Queue) Status() serve.Status {
	q.mu.Lock()
	st := serve.Status{Workers: q.cfg.Workers, Busy: len(q.active), Draining: q.draining, Retrying: q.retrying}
	local := make([]string, 0, len(q.active))
	for id := range q.active {
		local = append(local, id)
	}
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	return q.statusRows(ctx, st, local)
}

// statusRows fills st from the jobs table.
func (q *Queue) statusRows(ctx context.Context, st serve.Status, local []string) serve.Status {
	rows, err := q.cfg.DB.Query(ctx, `SELECT run_id, kind, coalesce(spec, ''), coalesce(answer, ''), key, recovered, state, queued_at
		FROM jobs WHERE state IN ('queued', 'running', 'parked') ORDER BY ord`)
	if err != nil {
		slices.Sort(local)
		st.Active = local
		return st
	}
	defer rows.Close()
	for rows.Next() {
		var j serve.Job
		var kind, state string
		var spec, answer []byte
		if err := rows.Scan(&j.RunID, &kind, &spec, &answer, &j.Key, &j.Recovered, &state, &j.Queued); err != nil {
			break
		}
		j.Kind = serve.JobKind(kind)
		if len(spec) > 0 {
			j.Spec = spec
		}
		if len(answer) > 0 {
			j.Answer = answer
		}
		switch state {
		case "queued":
			st.Queued = append(st.Queued, j)
		case "running":
			st.Active = append(st.Active, j.RunID)
		case "parked":
			st.Parked = append(st.Parked, j.RunID)
		}
	}
	slices.Sort(st.Active)
	slices.Sort(st.Parked)
	return st
}

// LastError is the error the run's last job ended with: this host's, or
// the one its failed row keeps.
func (q *Queue) LastError(runID string) string {
	q.mu.Lock()
	msg := q.lastErr[runID]
	q.mu.Unlock()
	if msg != "" {
		return msg
	}
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	_ = q.cfg.DB.QueryRow(ctx, `SELECT coalesce(error, '') FROM jobs WHERE run_id = $1 AND state = 'failed'`, runID).Scan(&msg)
	return msg
}

// worker claims and executes jobs until the queue drains or ctx ends.
func (q *Queue) worker(ctx context.Context) {
	defer q.wg.Done()
	for q.reserve(ctx) {
		c, ok, err := q.claim(ctx)
		if err != nil && ctx.Err() == nil {
			q.cfg.Logger.Warn("pgqueue: claim", "err", err)
		}
		if !ok {
			// Nothing to claim: give the slot back without waking anyone.
			// A wake here would find the same empty queue, and its claim
			// would wake the next one: the workers would poll the
			// database back to back forever (issue 22: an idle serve
			// used half a core). A job queued meanwhile has left its own
			// wake (LISTEN/NOTIFY), and the poll finds it otherwise.
			q.release()
			q.claimsEmpty.Add(1)
			q.idle(ctx)
			continue
		}
		q.execute(ctx, c)
	}
}

// reserve waits for a slot: not draining, not paused, and fewer than
// MaxActive jobs executing here.
func (q *Queue) reserve(ctx context.Context) bool {
	for {
		q.mu.Lock()
		if q.draining || ctx.Err() != nil {
			q.mu.Unlock()
			return false
		}
		if wait := time.Until(q.paused); wait > 0 {
			q.mu.Unlock()
			q.sleep(ctx, wait)
			continue
		}
		if q.cfg.MaxActive == 0 || q.busy < q.cfg.MaxActive {
			q.busy++
			q.mu.Unlock()
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.stop:
		case <-ctx.Done():
		}
	}
}

// release gives a slot back.
func (q *Queue) release() {
	q.mu.Lock()
	q.busy--
	q.mu.Unlock()
}

// idle waits for a notification or the next poll.
func (q *Queue) idle(ctx context.Context) {
	timer := time.NewTimer(q.cfg.Poll)
	defer timer.Stop()
	select {
	case <-q.wake:
	case <-timer.C:
	case <-q.stop:
	case <-ctx.Done():
	}
}

func (q *Queue) sleep(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-q.stop:
	case <-ctx.Done():
	}
}

// signal wakes up to n idle workers.
func (q *Queue) signal(n int) {
	for range n {
		select {
		case q.wake <- struct{}{}:
		default:
			return
		}
	}
}

func (q *Queue) gaugesLocked() {
	if q.cfg.Gauges != nil {
		q.cfg.Gauges.SetWorkers(q.cfg.Workers, len(q.active))
	}
}
