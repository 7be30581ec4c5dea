package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/serve"
)

// The chaos test's size: GAFFER_CHAOS_RUNS runs (default 6) while
// PostgreSQL is killed and restarted every ~1.5 seconds, at most
// GAFFER_CHAOS_RESTARTS times (default 12); then the runs must finish,
// within GAFFER_CHAOS_SECONDS (default 180) from the start, a bound
// against a hang, not a measure of speed: a loaded machine makes less
// progress between restarts.
const (
	chaosRunsEnv     = "GAFFER_CHAOS_RUNS"
	chaosRestartsEnv = "GAFFER_CHAOS_RESTARTS"
	chaosSecondsEnv  = "GAFFER_CHAOS_SECONDS"
	chaosSteps       = 30
)

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// chaosWorker executes a run as chaosSteps synced checkpoints under the
// run's lease, from the run's latest checkpoint on, recording each Put
// the store acknowledged.
type chaosWorker struct {
	host  string
	store *postgres.Store
	acked *ackLog
}

// ackLog is the checkpoints the store acknowledged, and the runs done.
type ackLog struct {
	mu    sync.Mutex
	acked map[string]map[uint64]bool
	done  map[string]bool
}

func (a *ackLog) ack(run string, seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acked[run] == nil {
		a.acked[run] = map[uint64]bool{}
	}
	a.acked[run][seq] = true
}

func (w *chaosWorker) Execute(ctx context.Context, job serve.Job) (serve.Outcome, error) {
	owner := checkpoint.Owner{ID: w.host + "/" + job.RunID, Host: w.host, PID: os.Getpid()}
	lease, err := w.store.Acquire(ctx, job.RunID, owner, 3*time.Second)
	if err != nil {
		return serve.OutcomeDone, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = w.store.Release(rctx, lease)
	}()
	latest, err := w.store.Latest(ctx, job.RunID)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return serve.OutcomeDone, err
	}
	for seq := latest.Seq + 1; seq <= chaosSteps; seq++ {
		if lease, err = w.store.Renew(ctx, lease, 3*time.Second); err != nil {
			return serve.OutcomeDone, err
		}
		cp := checkpoint.Checkpoint{RunID: job.RunID, Seq: seq, Parent: seq - 1, Step: int(seq),
			Values: map[string][]byte{"v": fmt.Appendf(nil, "%s-%d", job.RunID, seq)}, Time: time.Now()}
		if err := w.store.Put(ctx, cp, checkpoint.PutOptions{Sync: true, Fence: lease.Token}); err != nil {
			return serve.OutcomeDone, err
		}
		w.acked.ack(job.RunID, seq)
		time.Sleep(100 * time.Millisecond)
	}
	w.acked.mu.Lock()
	w.acked.done[job.RunID] = true
	w.acked.mu.Unlock()
	return serve.OutcomeDone, nil
}

// TestChaosRestarts kills and restarts PostgreSQL (pg_ctl stop -m
// immediate) every ~1.5 seconds while 3 workers, each a host of its own,
// finish the runs: every run completes, its seq chain has no gap, and no
// checkpoint the store acknowledged (synced) is lost.
func TestChaosRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a PostgreSQL server a dozen times")
	}
	if os.Getenv(pgtest.EnvURL) != "" {
		t.Skip("restarts the server: needs one of its own, not " + pgtest.EnvURL)
	}
	runs := envInt(t, chaosRunsEnv, 6)
	limit := time.Duration(envInt(t, chaosSecondsEnv, 180)) * time.Second
	maxRestarts := envInt(t, chaosRestartsEnv, 12)
	srv, err := pgtest.Start()
	if err != nil {
		if pgtest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer srv.Stop()
	url := srv.URL("postgres")
	acked := &ackLog{acked: map[string]map[uint64]bool{}, done: map[string]bool{}}
	var queues []*Queue
	for i := range 3 {
		store, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		host := fmt.Sprintf("w%d", i)
		q := newQueue(t, Config{DB: store.Pool(), HostID: host, Executor: &chaosWorker{host: host, store: store, acked: acked},
			Retry: func(error) bool { return true }, RetryAfter: 200 * time.Millisecond, Lease: 3 * time.Second, Poll: 300 * time.Millisecond})
		queues = append(queues, q)
	}
	for i := range runs {
		submit(t, queues[0], fmt.Sprintf("r-%02d", i))
	}
	for _, q := range queues {
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, q := range queues {
			q.Drain(5 * time.Second)
			q.Wait()
		}
	}()

	deadline := time.Now().Add(limit)
	restarts := 0
	allDone := func() bool {
		acked.mu.Lock()
		defer acked.mu.Unlock()
		return len(acked.done) == runs
	}
	for !allDone() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v and %d restarts, %d of %d runs done", limit, restarts, len(acked.done), runs)
		}
		time.Sleep(1200 * time.Millisecond)
		if allDone() {
			break
		}
		if restarts == maxRestarts {
			continue // the chaos is over: the runs finish on a server that stays up
		}
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		restarts++
	}
	t.Logf("%d runs done with %d restarts", runs, restarts)

	// Every job row goes once its run is done (finish retries through
	// the restarts).
	ctx := context.Background()
	waitFor(t, func() bool {
		var n int
		return queues[0].cfg.DB.QueryRow(ctx, "SELECT count(*) FROM jobs").Scan(&n) == nil && n == 0
	})
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for i := range runs {
		run := fmt.Sprintf("r-%02d", i)
		cps, err := store.List(ctx, run, checkpoint.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		have := map[uint64]bool{}
		for _, cp := range cps {
			have[cp.Seq] = true
			if want := fmt.Sprintf("%s-%d", run, cp.Seq); string(cp.Values["v"]) != want {
				t.Errorf("run %s seq %d holds %q, want %q", run, cp.Seq, cp.Values["v"], want)
			}
		}
		for seq := uint64(1); seq <= chaosSteps; seq++ {
			if !have[seq] {
				t.Errorf("run %s: seq %d missing (a gap in the chain)", run, seq)
			}
		}
		if len(cps) != chaosSteps {
			t.Errorf("run %s: %d checkpoints, want %d", run, len(cps), chaosSteps)
		}
		for seq := range acked.acked[run] {
			if !have[seq] {
				t.Errorf("run %s: acknowledged seq %d lost", run, seq)
			}
		}
	}
}
