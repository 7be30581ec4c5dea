package metrics

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeQueue is a QueueProbe whose answers the test sets.
type fakeQueue struct {
	mu     sync.Mutex
	queued int
	oldest time.Duration
	err    error
	block  bool // wait for the context to end
	calls  int
}

func (f *fakeQueue) probe(ctx context.Context) (int, time.Duration, error) {
	f.mu.Lock()
	f.calls++
	block := f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return 0, 0, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued, f.oldest, f.err
}

func (f *fakeQueue) set(fn func(*fakeQueue)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// gauge gathers reg and returns the value of the gauge name; ok is false
// when it has no series.
func gauge(t *testing.T, reg *prometheus.Registry, name string) (v float64, ok bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestQueueGaugesLocal: the file pool sets the queue length and when its
// oldest job began to wait; the age grows between the pool's calls, since
// it is measured when scraped. Both carry queue="local"; the age has no
// series before the pool's first report.
func TestQueueGaugesLocal(t *testing.T) {
	m, reg := newMetrics(t)
	now := time.Unix(1000, 0)
	m.serve.queue.now = func() time.Time { return now }
	compare := func(want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
			"gaffer_serve_queue_length", "gaffer_serve_queue_oldest_age_seconds"); err != nil {
			t.Fatal(err)
		}
	}
	const lengthHead = "# HELP gaffer_serve_queue_length Runs queued in gaffer serve, waiting for a worker or for their repository (one run per work tree at a time), by queue: local (the file pool's own; sum across processes) or shared (a database store's, every host's; max across hosts).\n# TYPE gaffer_serve_queue_length gauge\n"
	const oldestHead = "# HELP gaffer_serve_queue_oldest_age_seconds How long the oldest run queued in gaffer serve has waited since it was submitted, answered or put back, by queue (local: by this process's clock; shared: every host's, by the database's clock); 0 when none is queued.\n# TYPE gaffer_serve_queue_oldest_age_seconds gauge\n"
	m.SetQueueLength(2)
	compare(lengthHead + `gaffer_serve_queue_length{queue="local"} 2` + "\n")
	m.SetQueueOldest(time.Time{})
	compare(lengthHead + `gaffer_serve_queue_length{queue="local"} 2` + "\n" + oldestHead + `gaffer_serve_queue_oldest_age_seconds{queue="local"} 0` + "\n")
	m.SetQueueOldest(now.Add(-90 * time.Second))
	now = now.Add(10 * time.Second)
	compare(lengthHead + `gaffer_serve_queue_length{queue="local"} 2` + "\n" + oldestHead + `gaffer_serve_queue_oldest_age_seconds{queue="local"} 100` + "\n")
	m.SetQueueOldest(now.Add(time.Second)) // another clock, a little ahead
	compare(lengthHead + `gaffer_serve_queue_length{queue="local"} 2` + "\n" + oldestHead + `gaffer_serve_queue_oldest_age_seconds{queue="local"} 0` + "\n")

	// A probe's figures are the shared queue's.
	m.ProbeQueue((&fakeQueue{queued: 5, oldest: 3 * time.Second}).probe, nil)
	compare(lengthHead + `gaffer_serve_queue_length{queue="shared"} 5` + "\n" + oldestHead + `gaffer_serve_queue_oldest_age_seconds{queue="shared"} 3` + "\n")
}

// TestQueueGaugesWithoutProbe: the file pool sets the queue length; the
// oldest job's age has no series until something measures it.
func TestQueueGaugesWithoutProbe(t *testing.T) {
	m, reg := newMetrics(t)
	m.SetQueueLength(4)
	if v, ok := gauge(t, reg, "gaffer_serve_queue_length"); !ok || v != 4 {
		t.Fatalf("gaffer_serve_queue_length = %v (present %v), want 4", v, ok)
	}
	if n, err := testutil.GatherAndCount(reg, "gaffer_serve_queue_oldest_age_seconds"); err != nil || n != 0 {
		t.Fatalf("gaffer_serve_queue_oldest_age_seconds: %d series (%v), want none without a probe", n, err)
	}
}

// TestQueueProbe: with a probe, each scrape reads the queue (scrapes a
// second apart or more; closer ones share a read). A probe that fails or
// does not answer in time fails no scrape: the gauges keep their values,
// and the log says so once, then once more when the probe answers again.
func TestQueueProbe(t *testing.T) {
	m, reg := newMetrics(t)
	now := time.Unix(1000, 0)
	m.serve.queue.now = func() time.Time { return now }
	m.serve.queue.timeout = 50 * time.Millisecond
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	f := &fakeQueue{queued: 3, oldest: 90 * time.Second}
	m.ProbeQueue(f.probe, log)

	check := func(wantLen, wantAge float64) {
		t.Helper()
		l, lok := gauge(t, reg, "gaffer_serve_queue_length")
		a, aok := gauge(t, reg, "gaffer_serve_queue_oldest_age_seconds")
		if !lok || !aok || l != wantLen || a != wantAge {
			t.Fatalf("queue length %v (present %v), oldest %v (present %v); want %v and %v", l, lok, a, aok, wantLen, wantAge)
		}
	}
	check(3, 90)
	f.set(func(f *fakeQueue) { f.queued, f.oldest = 1, 2500*time.Millisecond })
	check(3, 90) // the same second: the last read
	if f.calls != 1 {
		t.Fatalf("%d probes within a second, want 1", f.calls)
	}
	now = now.Add(time.Second)
	check(1, 2.5)
	m.SetQueueLength(7) // the probe's figures win at the next read
	now = now.Add(time.Second)
	check(1, 2.5)

	f.set(func(f *fakeQueue) { f.err = errors.New("connection refused") })
	for range 3 {
		now = now.Add(time.Second)
		check(1, 2.5)
	}
	f.set(func(f *fakeQueue) { f.err, f.block = nil, true })
	now = now.Add(time.Second)
	start := time.Now()
	check(1, 2.5)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a probe that does not answer held the scrape %v", d)
	}
	if got := strings.Count(logBuf.String(), "level=WARN"); got != 1 {
		t.Fatalf("%d warnings for 4 failed probes, want 1:\n%s", got, logBuf.String())
	}
	if !strings.Contains(logBuf.String(), "connection refused") {
		t.Fatalf("the warning does not name the error:\n%s", logBuf.String())
	}

	f.set(func(f *fakeQueue) { f.block, f.queued, f.oldest = false, 0, 0 })
	now = now.Add(time.Second)
	check(0, 0)
	if !strings.Contains(logBuf.String(), "answers again") {
		t.Fatalf("no word of the probe answering again:\n%s", logBuf.String())
	}

	m.ProbeQueue(nil, nil)
	m.SetQueueLength(2)
	if v, _ := gauge(t, reg, "gaffer_serve_queue_length"); v != 2 {
		t.Fatalf("without a probe, gaffer_serve_queue_length = %v, want 2 as set", v)
	}
	if _, ok := gauge(t, reg, "gaffer_serve_queue_oldest_age_seconds"); ok {
		t.Fatal("without a probe or the pool's report, gaffer_serve_queue_oldest_age_seconds still has a series")
	}
}

// TestQueueProbeConcurrentScrapes: scrapes at once share one read.
func TestQueueProbeConcurrentScrapes(t *testing.T) {
	m, reg := newMetrics(t)
	now := time.Unix(1000, 0)
	m.serve.queue.now = func() time.Time { return now }
	f := &fakeQueue{queued: 2}
	m.ProbeQueue(f.probe, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if f.calls != 1 {
		t.Fatalf("%d probes for 8 scrapes at once, want 1", f.calls)
	}
}
