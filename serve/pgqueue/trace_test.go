package pgqueue

import (
	"context"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/serve"
)

// TestTraceContextTravelsWithTheJob: the traceparent and tracestate a
// job is submitted with come back with its claim, with the claim of the
// host that takes it over from a dead one, and with the answer another
// host queues for it (which carries none of its own).
func TestTraceContextTravelsWithTheJob(t *testing.T) {
	t.Parallel()
	db := database(t)
	const tp, ts = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=x"
	client := newQueue(t, Config{DB: db, HostID: "client"})
	if err := client.Submit(serve.Job{RunID: "r-1", Kind: serve.JobStart, Spec: []byte(`{"goal":"x"}`), TraceParent: tp, TraceState: ts}); err != nil {
		t.Fatal(err)
	}
	dead := newQueue(t, Config{DB: db, HostID: "dead", Lease: 300 * time.Millisecond})
	c, ok, err := dead.claim(context.Background())
	if !ok || err != nil || c.job.TraceParent != tp || c.job.TraceState != ts {
		t.Fatalf("claim = %+v %v %v; want the job with its trace context", c.job, ok, err)
	}
	jobs := make(chan serve.Job, 4)
	x := serve.ExecutorFunc(func(_ context.Context, job serve.Job) (serve.Outcome, error) {
		jobs <- job
		if job.Kind == serve.JobStart {
			return serve.OutcomeParked, nil
		}
		return serve.OutcomeDone, nil
	})
	started(t, newQueue(t, Config{DB: db, HostID: "alive", Executor: x, Poll: 100 * time.Millisecond}))
	next := func() serve.Job {
		t.Helper()
		select {
		case j := <-jobs:
			return j
		case <-time.After(30 * time.Second):
			t.Fatal("no job executed")
		}
		return serve.Job{}
	}
	if j := next(); !j.Recovered || j.TraceParent != tp || j.TraceState != ts {
		t.Fatalf("job taken over = %+v; want recovered with its trace context", j)
	}
	waitFor(t, func() bool { return len(client.Status().Parked) == 1 })
	if err := client.Answer("r-1", map[string]bool{"approved": true}); err != nil {
		t.Fatal(err)
	}
	if j := next(); j.Kind != serve.JobAnswer || j.TraceParent != tp || j.TraceState != ts {
		t.Fatalf("answer job = %+v; want the run's trace context kept", j)
	}
}

// TestOldDatabaseTakesTheTraceColumns: a database at the schema before
// the trace context (version 4) with a job queued is migrated when a
// serve opens it, and the old job runs, with no trace context.
func TestOldDatabaseTakesTheTraceColumns(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	old := openDB(t, url)
	if _, err := old.Exec(context.Background(), `ALTER TABLE jobs DROP COLUMN traceparent, DROP COLUMN tracestate;
		DELETE FROM schema_migrations WHERE version = 5;
		INSERT INTO jobs (run_id, kind) VALUES ('r-old', 'resume')`); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, url) // migrates to the current version
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE traceparent = '' AND tracestate = ''`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the migration: %d rows without trace context, %v; want the old job's", n, err)
	}
	rec := newRecorder()
	started(t, newQueue(t, Config{DB: db, HostID: "a", Executor: rec, Poll: 100 * time.Millisecond}))
	if j := rec.wait(t, 30*time.Second); j.RunID != "r-old" || j.Kind != serve.JobResume || j.TraceParent != "" || j.TraceState != "" {
		t.Fatalf("old job executed as %+v", j)
	}
}
