package serve

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Config.Now the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// fakeGauges records the pool's last report.
type fakeGauges struct {
	mu     sync.Mutex
	length int
	oldest time.Time
	calls  int // SetQueueOldest calls
}

func (g *fakeGauges) SetQueueLength(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.length = n
}

func (g *fakeGauges) SetQueueOldest(since time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.oldest = since
	g.calls++
}

func (g *fakeGauges) SetWorkers(total, busy int) {}

func (g *fakeGauges) get() (int, time.Time, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.length, g.oldest, g.calls
}

// checkOldest waits for the gauges to report length queued jobs, the
// oldest queued since want.
func checkOldest(t *testing.T, g *fakeGauges, length int, want time.Time) {
	t.Helper()
	waitFor(t, "the gauges", func() bool {
		n, since, _ := g.get()
		return n == length && since.Equal(want)
	})
}

// The pool reports when its oldest queued job began to wait: when it was
// submitted or answered, whatever the submitter sent; the zero time when
// none waits. A job taken by a worker stops waiting.
func TestPoolReportsOldestQueued(t *testing.T) {
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	g := &fakeGauges{}
	f := newFake()
	p := startPool(t, Config{Workers: 1, Executor: f, Gauges: g, Now: clock.Now})
	if _, since, calls := g.get(); calls == 0 || !since.IsZero() {
		t.Fatalf("after Start: oldest %v (%d calls), want the zero time reported", since, calls)
	}
	t0 := clock.Now()
	if err := p.Submit(Job{RunID: "a", Kind: JobStart}); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, f); !j.Queued.Equal(t0) {
		t.Errorf("a queued at %v, want %v", j.Queued, t0)
	}
	checkOldest(t, g, 0, time.Time{})
	t1 := clock.add(time.Minute)
	if err := p.Submit(Job{RunID: "b", Kind: JobStart, Queued: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	clock.add(time.Minute)
	if err := p.Answer("c", true); err != nil {
		t.Fatal(err)
	}
	checkOldest(t, g, 2, t1)
	f.release <- struct{}{} // a ends; the worker takes b
	if j := waitJob(t, f); j.RunID != "b" {
		t.Fatalf("took %s, want b", j.RunID)
	}
	checkOldest(t, g, 1, t1.Add(time.Minute))
	f.release <- struct{}{}
	waitJob(t, f)
	checkOldest(t, g, 0, time.Time{})
	f.release <- struct{}{}
	waitFor(t, "the pool to idle", func() bool { return p.Status().Busy == 0 })
}

// A job put back by a drain (or the machine's error) waits again from the
// time it went back; the journal keeps each queued job's time, and the
// next process keeps it. A job journaled as executing (the process died)
// and one journaled before jobs had a time wait from when New read them.
func TestPoolQueuedTimeAcrossRestarts(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "store.serve.json")
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := newFake()
	p, err := New(Config{Workers: 1, Executor: f, Journal: journal, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tb := clock.Now()
	submit(t, p, Job{RunID: "a", Kind: JobStart}, Job{RunID: "b", Kind: JobStart})
	waitJob(t, f)
	cut := clock.add(time.Hour)
	p.Drain(10 * time.Millisecond) // a never reaches a checkpoint: cut off
	st := p.Status()
	if len(st.Queued) != 2 || st.Queued[0].RunID != "a" || !st.Queued[0].Queued.Equal(cut) || !st.Queued[1].Queued.Equal(tb) {
		t.Fatalf("after the drain: %+v; want a queued at %v, then b at %v", st.Queued, cut, tb)
	}

	restart := clock.add(time.Hour)
	g := &fakeGauges{}
	p2, err := New(Config{Workers: 1, Executor: newFake(), Journal: journal, Now: clock.Now, Gauges: g})
	if err != nil {
		t.Fatal(err)
	}
	if q := p2.Status().Queued; len(q) != 2 || !q[0].Queued.Equal(cut) || !q[1].Queued.Equal(tb) {
		t.Fatalf("read back: %+v; want the journal's times", q)
	}

	// A journal with an executing job, and one from before the field.
	old := `{"version":1,"active":[{"run_id":"x","kind":"start","queued_at":"2001-01-01T00:00:00Z"}],` +
		`"queued":[{"run_id":"y","kind":"resume"},{"run_id":"z","kind":"start","queued_at":"2001-01-01T00:00:00Z"}]}`
	if err := writeFile(journal, old); err != nil {
		t.Fatal(err)
	}
	p3, err := New(Config{Workers: 1, Executor: newFake(), Journal: journal, Now: clock.Now, Gauges: g})
	if err != nil {
		t.Fatal(err)
	}
	long := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	q := p3.Status().Queued
	if len(q) != 3 || !q[0].Queued.Equal(restart) || !q[1].Queued.Equal(restart) || !q[2].Queued.Equal(long) {
		t.Fatalf("read back: %+v; want x and y queued at %v, z at %v", q, restart, long)
	}
	p3.mu.Lock() // what Start reports, without workers to take the jobs
	p3.gaugesLocked()
	p3.mu.Unlock()
	if n, since, _ := g.get(); n != 3 || !since.Equal(long) {
		t.Fatalf("gauges: %d queued, oldest since %v; want 3, %v", n, since, long)
	}
}
