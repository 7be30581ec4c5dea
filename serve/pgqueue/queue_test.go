package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/serve"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// database opens a new, migrated database and returns its pool.
func database(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return openDB(t, pgtest.URL(t))
}

func openDB(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Pool()
}

func newQueue(t *testing.T, cfg Config) *Queue {
	t.Helper()
	q, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// started starts q and drains it when the test ends.
func started(t *testing.T, q *Queue) *Queue {
	t.Helper()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Drain(5 * time.Second); q.Wait() })
	return q
}

// recorder is an Executor that reports the jobs it executes.
type recorder struct{ jobs chan serve.Job }

func newRecorder() *recorder { return &recorder{jobs: make(chan serve.Job, 100)} }

func (r *recorder) Execute(_ context.Context, job serve.Job) (serve.Outcome, error) {
	r.jobs <- job
	return serve.OutcomeDone, nil
}

func (r *recorder) wait(t *testing.T, within time.Duration) serve.Job {
	t.Helper()
	select {
	case j := <-r.jobs:
		return j
	case <-time.After(within):
		t.Fatalf("no job executed within %v", within)
	}
	return serve.Job{}
}

func submit(t *testing.T, q *Queue, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := q.Submit(serve.Job{RunID: id, Kind: serve.JobStart, Spec: []byte(`{"goal":"x"}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClaimSkipLocked claims 60 jobs with 8 claimers of 8 hosts at once:
// SKIP LOCKED gives each job to exactly one of them.
func TestClaimSkipLocked(t *testing.T) {
	db := database(t)
	client := newQueue(t, Config{DB: db, HostID: "client"})
	const jobs, claimers = 60, 8
	for i := range jobs {
		submit(t, client, fmt.Sprintf("r-%02d", i))
	}
	if err := client.Submit(serve.Job{RunID: "r-00", Kind: serve.JobResume}); !errors.Is(err, serve.ErrDuplicate) {
		t.Fatalf("second submit of a queued run: %v, want ErrDuplicate", err)
	}
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	for i := range claimers {
		q := newQueue(t, Config{DB: db, HostID: fmt.Sprintf("h%d", i)})
		wg.Go(func() {
			for {
				c, ok, err := q.claim(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				if prev, dup := got[c.job.RunID]; dup {
					t.Errorf("run %s claimed by %s and %s", c.job.RunID, prev, q.cfg.HostID)
				}
				got[c.job.RunID] = q.cfg.HostID
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != jobs {
		t.Fatalf("%d jobs claimed, want %d", len(got), jobs)
	}
	hosts := map[string]bool{}
	for _, h := range got {
		hosts[h] = true
	}
	t.Logf("%d jobs over %d claimers", len(got), len(hosts))
}

// TestNotifyWakes: with a poll of a minute, a submitted job executes at
// once, woken by NOTIFY.
func TestNotifyWakes(t *testing.T) {
	db := database(t)
	rec := newRecorder()
	q := newQueue(t, Config{DB: db, HostID: "a", Executor: rec, Poll: time.Minute})
	started(t, q)
	time.Sleep(300 * time.Millisecond) // the listener is up (it wakes the workers once when it is)
	client := newQueue(t, Config{DB: db, HostID: "client"})
	begin := time.Now()
	submit(t, client, "r-1")
	if j := rec.wait(t, 5*time.Second); j.RunID != "r-1" || j.Kind != serve.JobStart || string(j.Spec) != `{"goal":"x"}` {
		t.Fatalf("executed %+v", j)
	}
	t.Logf("woken in %v", time.Since(begin))
}

// TestPollingWhenNotificationsLost: without LISTEN, a job is found by the
// next poll.
func TestPollingWhenNotificationsLost(t *testing.T) {
	db := database(t)
	rec := newRecorder()
	q := newQueue(t, Config{DB: db, HostID: "a", Executor: rec, Poll: 200 * time.Millisecond, NoListen: true})
	started(t, q)
	submit(t, q, "r-1")
	rec.wait(t, 3*time.Second)
}

// TestLeaseExpiryTakeover: a host that claimed a job and stopped
// renewing it loses it to another host once its lease expires; the job
// comes Recovered and the takeover is counted, naming the holder.
func TestLeaseExpiryTakeover(t *testing.T) {
	db := database(t)
	dead := newQueue(t, Config{DB: db, HostID: "dead", Lease: 500 * time.Millisecond})
	submit(t, dead, "r-1")
	if _, ok, err := dead.claim(context.Background()); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	rec := newRecorder()
	begin := time.Now()
	started(t, newQueue(t, Config{DB: db, HostID: "alive", Executor: rec, Poll: 100 * time.Millisecond}))
	j := rec.wait(t, 5*time.Second)
	if took := time.Since(begin); took < 400*time.Millisecond {
		t.Fatalf("taken over after %v, before the lease expired", took)
	}
	if !j.Recovered {
		t.Fatalf("job taken over is not Recovered: %+v", j)
	}
}

// TestTakeoverCap: a job taken over more than MaxTakeovers times is not
// executed but failed, naming its last holder.
func TestTakeoverCap(t *testing.T) {
	db := database(t)
	lease := 50 * time.Millisecond
	client := newQueue(t, Config{DB: db, HostID: "client"})
	submit(t, client, "r-1")
	for i := range DefaultMaxTakeovers + 1 { // claims with 0…5 takeovers
		q := newQueue(t, Config{DB: db, HostID: fmt.Sprintf("h%d", i), Lease: lease})
		c, ok, err := q.claim(context.Background())
		if !ok || err != nil {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
		if c.takeovers != i {
			t.Fatalf("claim %d: %d takeovers", i, c.takeovers)
		}
		time.Sleep(2 * lease)
	}
	rec := newRecorder()
	abandoned := make(chan error, 1)
	q := started(t, newQueue(t, Config{DB: db, HostID: "last", Executor: rec, Poll: 50 * time.Millisecond,
		Abandon: func(_ context.Context, job serve.Job, err error) error { abandoned <- err; return nil }}))
	var err error
	select {
	case err = <-abandoned:
	case j := <-rec.jobs:
		t.Fatalf("executed %+v", j)
	case <-time.After(5 * time.Second):
		t.Fatal("not abandoned")
	}
	want := "run r-1 failed: taken over 6 times (at most 5), the last time from host h5"
	if err.Error() != want {
		t.Fatalf("abandoned with %q, want %q", err, want)
	}
	waitFor(t, func() bool { return client.LastError("r-1") == want })
	if st := q.Status(); len(st.Queued)+len(st.Active) != 0 {
		t.Fatalf("failed job still queued or active: %+v", st)
	}
	// A new job of the run (a resume) replaces the failed one.
	if err := client.Submit(serve.Job{RunID: "r-1", Kind: serve.JobResume}); err != nil {
		t.Fatal(err)
	}
	if j := rec.wait(t, 5*time.Second); j.Kind != serve.JobResume || j.Recovered {
		t.Fatalf("executed %+v", j)
	}
}

// blocker executes jobs until their context ends and reports its cause.
type blocker struct {
	started chan string
	causes  chan error
}

func (b *blocker) Execute(ctx context.Context, job serve.Job) (serve.Outcome, error) {
	b.started <- job.RunID
	<-ctx.Done()
	b.causes <- context.Cause(ctx)
	return serve.OutcomeDone, nil
}

// TestCancelAnyHost: a cancel from another host's client stops the run
// where it executes, at once by NOTIFY or, without it, at the next
// heartbeat.
func TestCancelAnyHost(t *testing.T) {
	for _, listen := range []bool{true, false} {
		t.Run(fmt.Sprintf("listen=%v", listen), func(t *testing.T) {
			db := database(t)
			b := &blocker{started: make(chan string, 1), causes: make(chan error, 1)}
			q := started(t, newQueue(t, Config{DB: db, HostID: "a", Executor: b, Poll: 300 * time.Millisecond, NoListen: !listen}))
			client := newQueue(t, Config{DB: db, HostID: "b"})
			submit(t, client, "r-1")
			<-b.started
			if st := client.Status(); len(st.Active) != 1 || st.Active[0] != "r-1" {
				t.Fatalf("status from another host: %+v", st)
			}
			begin := time.Now()
			if !client.Cancel("r-1") {
				t.Fatal("cancel found no job")
			}
			select {
			case cause := <-b.causes:
				if !errors.Is(cause, serve.ErrCancelled) {
					t.Fatalf("cause %v", cause)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("not cancelled")
			}
			t.Logf("cancelled in %v", time.Since(begin))
			waitFor(t, func() bool { st := q.Status(); return len(st.Active)+len(st.Queued) == 0 })
		})
	}
}

// TestParkAndAnswer: a parked job keeps its row; an answer from any host
// replaces it and is claimed.
func TestParkAndAnswer(t *testing.T) {
	db := database(t)
	jobs := make(chan serve.Job, 4)
	x := serve.ExecutorFunc(func(_ context.Context, job serve.Job) (serve.Outcome, error) {
		jobs <- job
		if job.Kind == serve.JobStart {
			return serve.OutcomeParked, nil
		}
		return serve.OutcomeDone, nil
	})
	q := started(t, newQueue(t, Config{DB: db, HostID: "a", Executor: x, Poll: 100 * time.Millisecond}))
	submit(t, q, "r-1")
	<-jobs
	client := newQueue(t, Config{DB: db, HostID: "b"})
	waitFor(t, func() bool { st := client.Status(); return len(st.Parked) == 1 })
	if err := client.Answer("r-1", map[string]bool{"approved": true}); err != nil {
		t.Fatal(err)
	}
	select {
	case j := <-jobs:
		if j.Kind != serve.JobAnswer || string(j.Answer) != `{"approved":true}` {
			t.Fatalf("executed %+v", j)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("answer not executed")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStatusQueuedAt: Status gives each queued job the time it entered
// the queue (the jobs table's queued_at, by the database's clock), as the
// file pool does with its own clock.
func TestStatusQueuedAt(t *testing.T) {
	db := database(t)
	q := newQueue(t, Config{DB: db, HostID: "a"})
	submit(t, q, "r-1", "r-2")
	backdate(t, db, "r-1", 90*time.Second)
	want := map[string]time.Time{}
	rows, err := db.Query(context.Background(), `SELECT run_id, queued_at FROM jobs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		want[id] = at
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	st := q.Status()
	if len(st.Queued) != 2 {
		t.Fatalf("queued = %+v, want r-1 and r-2", st.Queued)
	}
	for _, j := range st.Queued {
		if j.Queued.IsZero() || !j.Queued.Equal(want[j.RunID]) {
			t.Errorf("%s queued at %v, want %v (queued_at)", j.RunID, j.Queued, want[j.RunID])
		}
	}
	if a, b := st.Queued[0].Queued, st.Queued[1].Queued; b.Sub(a) < 89*time.Second {
		t.Errorf("r-1 queued at %v, r-2 at %v: want r-1 90s earlier", a, b)
	}
}

// TestIdleQueueDoesNotSpin: with nothing queued, workers claim once per
// poll each (and once when the listener comes up), not back to back: a
// claim that found nothing used to wake the next worker, whose claim woke
// the next, forever (half a core and ~30,000 wake-ups a second for an
// idle serve on PostgreSQL, issue 22).
func TestIdleQueueDoesNotSpin(t *testing.T) {
	db := database(t)
	rec := newRecorder()
	q := newQueue(t, Config{DB: db, HostID: "a", Executor: rec, Workers: 4, Poll: time.Minute})
	started(t, q)
	time.Sleep(2 * time.Second)
	// Each of 4 workers: its first claim, and one per wake (the listener
	// wakes them once when it is up): 8; a spin makes thousands.
	if n := q.claimsEmpty.Load(); n > 16 {
		t.Fatalf("%d empty claims in 2 s of an idle queue with a 1-minute poll, want at most 16", n)
	}
	// Still woken by a notification, well before the poll.
	submit(t, newQueue(t, Config{DB: db, HostID: "client"}), "r-idle")
	if j := rec.wait(t, 5*time.Second); j.RunID != "r-idle" {
		t.Fatalf("executed %+v", j)
	}
}
