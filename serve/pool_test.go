package serve

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
)

// fakeExec records jobs and lets the test drive them.
type fakeExec struct {
	mu      sync.Mutex
	jobs    []Job
	running int
	max     int
	release chan struct{}              // each receive lets one job finish
	outcome func(Job) (Outcome, error) // default: done
	started chan Job
}

func newFake() *fakeExec {
	return &fakeExec{release: make(chan struct{}), started: make(chan Job, 100)}
}

func (f *fakeExec) Execute(ctx context.Context, job Job) (Outcome, error) {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	f.running++
	f.max = max(f.max, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	f.started <- job
	select {
	case <-f.release:
	case <-ctx.Done():
		return OutcomeDone, context.Cause(ctx)
	}
	if f.outcome != nil {
		return f.outcome(job)
	}
	return OutcomeDone, nil
}

func waitJob(t *testing.T, f *fakeExec) Job {
	t.Helper()
	select {
	case j := <-f.started:
		return j
	case <-time.After(10 * time.Second):
		t.Fatal("no job started")
	}
	return Job{}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWorkersBoundConcurrency(t *testing.T) {
	f := newFake()
	p, err := New(Config{Workers: 2, Executor: f})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := p.Submit(Job{RunID: id, Kind: JobStart}); err != nil {
			t.Fatal(err)
		}
	}
	waitJob(t, f)
	waitJob(t, f)
	if st := p.Status(); st.Busy != 2 || len(st.Queued) != 2 {
		t.Fatalf("status = %+v, want 2 busy and 2 queued", st)
	}
	for range 4 {
		f.release <- struct{}{}
	}
	waitFor(t, "all jobs", func() bool { st := p.Status(); return st.Busy == 0 && len(st.Queued) == 0 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.max != 2 || len(f.jobs) != 4 {
		t.Fatalf("ran %d jobs with at most %d at once; want 4 with 2", len(f.jobs), f.max)
	}
	// Two workers take a and b first (in either order), then c and d.
	first := map[string]bool{f.jobs[0].RunID: true, f.jobs[1].RunID: true}
	if !first["a"] || !first["b"] {
		t.Errorf("jobs ran out of order: %v", f.jobs)
	}
}

func TestParkedRunHoldsNoWorker(t *testing.T) {
	f := newFake()
	f.outcome = func(j Job) (Outcome, error) {
		if j.RunID == "a" && j.Kind == JobStart {
			return OutcomeParked, nil
		}
		return OutcomeDone, nil
	}
	p, err := New(Config{Workers: 1, Executor: f})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = p.Start(ctx)
	_ = p.Submit(Job{RunID: "a", Kind: JobStart})
	_ = p.Submit(Job{RunID: "b", Kind: JobStart})
	waitJob(t, f)
	f.release <- struct{}{} // a parks
	if j := waitJob(t, f); j.RunID != "b" {
		t.Fatalf("second job = %s, want b while a is parked", j.RunID)
	}
	if st := p.Status(); len(st.Parked) != 1 || st.Parked[0] != "a" {
		t.Fatalf("parked = %v, want [a]", st.Parked)
	}
	f.release <- struct{}{} // b finishes
	if err := p.Answer("a", map[string]bool{"approved": true}); err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, f)
	if j.RunID != "a" || j.Kind != JobAnswer || string(j.Answer) != `{"approved":true}` {
		t.Fatalf("answer job = %+v", j)
	}
	f.release <- struct{}{}
	waitFor(t, "a done", func() bool { st := p.Status(); return st.Busy == 0 && len(st.Parked) == 0 })
}

func TestSubmitRejectsDuplicatesAndDraining(t *testing.T) {
	f := newFake()
	p, _ := New(Config{Workers: 1, Executor: f})
	_ = p.Submit(Job{RunID: "a", Kind: JobStart})
	if err := p.Submit(Job{RunID: "a", Kind: JobStart}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate submit: %v", err)
	}
	p.Drain(time.Second)
	if err := p.Submit(Job{RunID: "b", Kind: JobStart}); !errors.Is(err, ErrDraining) {
		t.Fatalf("submit while draining: %v", err)
	}
	if _, err := New(Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New without executor: %v", err)
	}
}

func TestCancel(t *testing.T) {
	f := newFake()
	p, _ := New(Config{Workers: 1, Executor: f})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = p.Start(ctx)
	_ = p.Submit(Job{RunID: "a", Kind: JobStart})
	_ = p.Submit(Job{RunID: "b", Kind: JobStart})
	waitJob(t, f)
	if !p.Cancel("b") {
		t.Fatal("Cancel(b) did not find the queued job")
	}
	if !p.Cancel("a") {
		t.Fatal("Cancel(a) did not find the executing job")
	}
	waitFor(t, "a cancelled", func() bool { return p.LastError("a") != "" })
	if got := p.LastError("a"); got != ErrCancelled.Error() {
		t.Errorf("a's error = %q", got)
	}
	if p.Cancel("zzz") {
		t.Error("Cancel of an unknown run found it")
	}
	if st := p.Status(); len(st.Queued) != 0 || st.Busy != 0 {
		t.Errorf("status after cancels = %+v", st)
	}
}

// stepExec executes a fake run step by step, "saving a checkpoint" after
// each through the pool's Observe, as graph.Runner would.
type stepExec struct {
	pool    *LocalQueue
	steps   chan struct{}
	acks    chan struct{} // one per checkpoint saved (after Observe)
	started chan struct{}
	saved   int
	mu      sync.Mutex
}

func (s *stepExec) Execute(ctx context.Context, job Job) (Outcome, error) {
	s.started <- struct{}{}
	for {
		select {
		case <-ctx.Done():
			return OutcomeDone, context.Cause(ctx)
		case <-s.steps:
		}
		if ctx.Err() != nil { // a step does not start once the run is cancelled
			return OutcomeDone, context.Cause(ctx)
		}
		s.mu.Lock()
		s.saved++
		s.mu.Unlock()
		s.pool.Observe(graph.Event{Kind: graph.CheckpointSaved, RunID: job.RunID})
		s.acks <- struct{}{}
	}
}

func TestDrainStopsAtCheckpointAndJournalResumes(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "store.serve.json")
	ex := &stepExec{steps: make(chan struct{}), acks: make(chan struct{}, 10), started: make(chan struct{}, 1)}
	p, err := New(Config{Workers: 1, Executor: ex, Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	ex.pool = p
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = p.Start(ctx)
	_ = p.Submit(Job{RunID: "a", Kind: JobStart, Spec: json.RawMessage(`{"goal":"x"}`)})
	_ = p.Submit(Job{RunID: "b", Kind: JobStart})
	<-ex.started
	for range 2 { // two checkpoints before the drain: the run goes on
		ex.steps <- struct{}{}
		<-ex.acks
	}
	drained := make(chan struct{})
	go func() { p.Drain(time.Minute); close(drained) }()
	waitFor(t, "draining", func() bool { return p.Status().Draining })
	ex.steps <- struct{}{} // the step in flight reaches its checkpoint: the run stops there
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not return after the checkpoint")
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.saved != 3 {
		t.Errorf("saved %d checkpoints, want 3", ex.saved)
	}
	// The next process finds a (cut off) first, then b.
	f := newFake()
	p2, err := New(Config{Workers: 1, Executor: f, Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	st := p2.Status()
	if len(st.Queued) != 2 || st.Queued[0].RunID != "a" || st.Queued[1].RunID != "b" {
		t.Fatalf("recovered queue = %+v, want a then b", st.Queued)
	}
	if !st.Queued[0].Recovered || string(st.Queued[0].Spec) != `{"goal":"x"}` {
		t.Errorf("recovered job = %+v", st.Queued[0])
	}
}

func TestDrainTimeoutCancels(t *testing.T) {
	f := newFake() // never saves a checkpoint
	p, _ := New(Config{Workers: 1, Executor: f, Journal: filepath.Join(t.TempDir(), "j.json")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = p.Start(ctx)
	_ = p.Submit(Job{RunID: "a", Kind: JobStart})
	waitJob(t, f)
	p.Drain(10 * time.Millisecond) // returns only once the worker stopped
	if st := p.Status(); st.Busy != 0 || len(st.Queued) != 1 || st.Queued[0].RunID != "a" {
		t.Fatalf("status after drain = %+v, want a kept for the next process", st)
	}
}

func TestCrashLeavesActiveJobsInJournal(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "j.json")
	f := newFake()
	p, _ := New(Config{Workers: 1, Executor: f, Journal: journal})
	ctx, cancel := context.WithCancel(context.Background())
	_ = p.Start(ctx)
	_ = p.Submit(Job{RunID: "a", Kind: JobAnswer, Answer: json.RawMessage(`true`)})
	_ = p.Submit(Job{RunID: "b", Kind: JobStart})
	waitJob(t, f)
	// "Crash": a new process reads the journal while a still executes.
	p2, err := New(Config{Workers: 1, Executor: newFake(), Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	st := p2.Status()
	if len(st.Queued) != 2 || st.Queued[0].RunID != "a" || st.Queued[0].Kind != JobAnswer || st.Queued[1].RunID != "b" {
		t.Fatalf("recovered = %+v", st.Queued)
	}
	cancel()
	p.Wait()
}

func TestBadJournal(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "j.json")
	if err := writeJournal(journal, journal0()); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Executor: newFake(), Journal: journal}); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(journal, "{not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Executor: newFake(), Journal: journal}); !errors.Is(err, ErrJournal) {
		t.Fatalf("New with a corrupt journal: %v, want ErrJournal", err)
	}
}
