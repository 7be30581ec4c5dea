package pgqueue

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/serve"
)

var _ QueueProber = (*metrics.Metrics)(nil)

// gate executes each job until the test opens its run's gate.
type gate struct {
	started chan string
	mu      sync.Mutex
	open    map[string]chan struct{}
}

func newGate() *gate { return &gate{started: make(chan string, 16), open: map[string]chan struct{}{}} }

func (g *gate) ch(runID string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[runID] == nil {
		g.open[runID] = make(chan struct{})
	}
	return g.open[runID]
}

func (g *gate) Execute(ctx context.Context, job serve.Job) (serve.Outcome, error) {
	g.started <- job.RunID
	select {
	case <-g.ch(job.RunID):
	case <-ctx.Done():
	}
	return serve.OutcomeDone, nil
}

func (g *gate) release(runID string) { close(g.ch(runID)) }

func (g *gate) wait(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no job started within 10s")
	}
	return ""
}

// gauges are the serve gauges of one scrape.
type gauges struct {
	queued, oldest, busy, workers float64
	hasOldest                     bool
}

func scrapeGauges(t *testing.T, reg *prometheus.Registry) gauges {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	var g gauges
	for _, mf := range mfs {
		v := mf.GetMetric()[0].GetGauge().GetValue()
		switch mf.GetName() {
		case "gaffer_serve_queue_length":
			g.queued = v
		case "gaffer_serve_queue_oldest_age_seconds":
			g.oldest, g.hasOldest = v, true
		case "gaffer_serve_workers_busy":
			g.busy = v
		case "gaffer_serve_workers":
			g.workers = v
		}
	}
	return g
}

// eventually scrapes reg until ok accepts the gauges (a scrape reads the
// queue at most once a second), at most 10s.
func eventually(t *testing.T, reg *prometheus.Registry, what string, ok func(gauges) bool) gauges {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := scrapeGauges(t, reg)
		if ok(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the gauges are %+v", what, g)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func backdate(t *testing.T, db *pgxpool.Pool, runID string, ago time.Duration) {
	t.Helper()
	_, err := db.Exec(context.Background(), `UPDATE jobs SET queued_at = now() - $2::bigint * interval '1 microsecond' WHERE run_id = $1`,
		runID, ago.Microseconds())
	if err != nil {
		t.Fatal(err)
	}
}

// TestGauges follows a serve's gauges as jobs are queued, claimed and
// finished: the queue's length and its oldest job's age are every host's
// (read from the jobs table at scrape time), the busy workers this
// host's.
func TestGauges(t *testing.T) {
	db := database(t)
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	client := newQueue(t, Config{DB: db, HostID: "client"})
	submit(t, client, "r-1", "r-2", "r-3")
	backdate(t, db, "r-1", 90*time.Second)
	backdate(t, db, "r-2", 60*time.Second)
	backdate(t, db, "r-3", 10*time.Second)
	n, oldest, err := client.Probe(context.Background())
	if err != nil || n != 3 || oldest < 90*time.Second || oldest > 100*time.Second {
		t.Fatalf("Probe = %d, %v, %v; want 3 jobs, the oldest 90s old", n, oldest, err)
	}

	g := newGate()
	a := newQueue(t, Config{DB: db, HostID: "a", Workers: 2, Executor: g, Gauges: m, Poll: 100 * time.Millisecond})
	if got := scrapeGauges(t, reg); got.hasOldest || got.queued != 0 {
		t.Fatalf("before the queue starts: %+v, want no probe yet", got)
	}
	started(t, a)
	for range 2 {
		g.wait(t)
	}
	got := eventually(t, reg, "r-1 and r-2 executing", func(g gauges) bool { return g.queued == 1 && g.busy == 2 })
	if !got.hasOldest || got.oldest < 10 || got.oldest > 20 || got.workers != 2 {
		t.Fatalf("r-3 queued for 10s, two of two workers busy: %+v", got)
	}

	g.release("r-1")
	if id := g.wait(t); id != "r-3" {
		t.Fatalf("started %s, want r-3", id)
	}
	eventually(t, reg, "r-3 claimed", func(g gauges) bool { return g.queued == 0 && g.oldest == 0 && g.busy == 2 })

	submit(t, client, "r-4")
	got = eventually(t, reg, "r-4 queued", func(g gauges) bool { return g.queued == 1 })
	if got.oldest > 5 || got.busy != 2 {
		t.Fatalf("r-4 just queued, two workers busy: %+v", got)
	}
	g.release("r-2")
	g.wait(t)
	g.release("r-3")
	g.release("r-4")
	eventually(t, reg, "all done", func(g gauges) bool { return g.queued == 0 && g.oldest == 0 && g.busy == 0 })
}

// lockedBuffer is a log destination the test reads while others write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestGaugesDatabaseGone: a database that stops answering fails no
// scrape; the gauges keep their last values and the log says so once.
func TestGaugesDatabaseGone(t *testing.T) {
	url := pgtest.URL(t)
	db := openDB(t, url)
	client := newQueue(t, Config{DB: db, HostID: "client"})
	submit(t, client, "r-1", "r-2")
	backdate(t, db, "r-1", time.Minute)

	own := openDB(t, url) // the pool the test closes
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	q := newQueue(t, Config{DB: own, HostID: "a", Executor: newRecorder(), Gauges: m, Logger: log})
	q.probeGauges() // what Start does, without workers to claim the jobs
	before := scrapeGauges(t, reg)
	if before.queued != 2 || before.oldest < 60 || before.oldest > 70 {
		t.Fatalf("two jobs, the oldest a minute old: %+v", before)
	}
	own.Close()
	for range 3 {
		time.Sleep(1100 * time.Millisecond) // past the second scrapes share
		if got := scrapeGauges(t, reg); got != before {
			t.Fatalf("with the database gone the gauges are %+v, want the last ones %+v", got, before)
		}
	}
	if n := strings.Count(logs.String(), "metrics: read the run queue"); n != 1 {
		t.Fatalf("%d warnings for three failed reads, want 1:\n%s", n, logs.String())
	}
}

// TestQueuedAt: a job's wait starts when it enters the queue (submitted,
// answered, released by a drain or a retry); a job put back because its
// key was busy where it was claimed still waits since then.
func TestQueuedAt(t *testing.T) {
	db := database(t)
	q := newQueue(t, Config{DB: db, HostID: "a"})
	oldest := func() time.Duration {
		t.Helper()
		_, d, err := q.Probe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	claimOne := func() claimed {
		t.Helper()
		c, ok, err := q.claim(context.Background())
		if err != nil || !ok {
			t.Fatalf("claim: %v, %v", ok, err)
		}
		return c
	}
	submit(t, q, "r-1")
	backdate(t, db, "r-1", time.Hour)
	q.pass(context.Background(), claimOne())
	if d := oldest(); d < time.Hour {
		t.Fatalf("passed over: waited %v, want the hour it waited before", d)
	}
	clear(q.passed)
	q.finish(context.Background(), claimOne(), "queued", "")
	if d := oldest(); d > time.Minute {
		t.Fatalf("released by a drain: waited %v, want a fresh wait", d)
	}
	backdate(t, db, "r-1", time.Hour)
	q.finish(context.Background(), claimOne(), "parked", "")
	if n, d, _ := q.Probe(context.Background()); n != 0 || d != 0 {
		t.Fatalf("parked: %d queued, the oldest %v; want none", n, d)
	}
	if err := q.Answer("r-1", true); err != nil {
		t.Fatal(err)
	}
	if d := oldest(); d > time.Minute {
		t.Fatalf("answered: waited %v, want a fresh wait", d)
	}
}
