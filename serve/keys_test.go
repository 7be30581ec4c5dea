package serve

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// gateExec records which job is inside Execute for each key, and holds
// each job until the test opens its run's gate.
type gateExec struct {
	mu       sync.Mutex
	inside   map[string]string // key → run id executing
	overlaps []string          // "a2 entered while a1 held A"
	order    []string          // run ids in the order they entered
	gates    map[string]chan struct{}
	started  chan Job
	outcome  func(Job) Outcome // default: done
}

func newGate() *gateExec {
	return &gateExec{inside: map[string]string{}, gates: map[string]chan struct{}{}, started: make(chan Job, 100)}
}

func (g *gateExec) gateLocked(runID string) chan struct{} {
	c := g.gates[runID]
	if c == nil {
		c = make(chan struct{})
		g.gates[runID] = c
	}
	return c
}

// open lets the run's executing job (or its next one) return.
func (g *gateExec) open(runID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.gateLocked(runID))
	delete(g.gates, runID) // the run's next job waits on a new gate
}

func (g *gateExec) Execute(ctx context.Context, job Job) (Outcome, error) {
	g.mu.Lock()
	if other, ok := g.inside[job.Key]; ok {
		g.overlaps = append(g.overlaps, job.RunID+" entered while "+other+" held "+job.Key)
	}
	g.inside[job.Key] = job.RunID
	g.order = append(g.order, job.RunID)
	gate := g.gateLocked(job.RunID)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		if g.inside[job.Key] == job.RunID {
			delete(g.inside, job.Key)
		}
		g.mu.Unlock()
	}()
	g.started <- job
	select {
	case <-gate:
	case <-ctx.Done():
		return OutcomeDone, context.Cause(ctx)
	}
	if g.outcome != nil {
		return g.outcome(job), nil
	}
	return OutcomeDone, nil
}

func (g *gateExec) next(t *testing.T) Job {
	t.Helper()
	select {
	case j := <-g.started:
		return j
	case <-time.After(10 * time.Second):
		t.Fatal("no job started")
	}
	return Job{}
}

func (g *gateExec) check(t *testing.T, wantOrder ...string) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.overlaps) > 0 {
		t.Errorf("jobs of one key overlapped: %v", g.overlaps)
	}
	if !slices.Equal(g.order, wantOrder) {
		t.Errorf("jobs entered in order %v, want %v", g.order, wantOrder)
	}
}

func startPool(t *testing.T, cfg Config) *LocalQueue {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); p.Wait() })
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

func submit(t *testing.T, p *LocalQueue, jobs ...Job) {
	t.Helper()
	for _, j := range jobs {
		if err := p.Submit(j); err != nil {
			t.Fatal(err)
		}
	}
}

func idle(p *LocalQueue) func() bool {
	return func() bool { st := p.Status(); return st.Busy == 0 && len(st.Queued) == 0 }
}

func TestKeySameKeyNeverOverlaps(t *testing.T) {
	g := newGate()
	p := startPool(t, Config{Workers: 2, Executor: g})
	submit(t, p, Job{RunID: "a1", Kind: JobStart, Key: "A"})
	if j := g.next(t); j.RunID != "a1" {
		t.Fatalf("first job = %s", j.RunID)
	}
	// The idle worker must pass over a2 (its key is held) and take z.
	submit(t, p, Job{RunID: "a2", Kind: JobStart, Key: "A"}, Job{RunID: "z", Kind: JobStart, Key: "Z"})
	if j := g.next(t); j.RunID != "z" {
		t.Fatalf("second job = %s while a1 holds A, want z", j.RunID)
	}
	g.open("z")
	g.open("a1")
	if j := g.next(t); j.RunID != "a2" {
		t.Fatalf("third job = %s, want a2", j.RunID)
	}
	g.open("a2")
	waitFor(t, "the queue to empty", idle(p))
	g.check(t, "a1", "z", "a2")
}

func TestKeyDifferentKeysOverlap(t *testing.T) {
	g := newGate()
	p := startPool(t, Config{Workers: 2, Executor: g})
	submit(t, p, Job{RunID: "a", Kind: JobStart, Key: "A"}, Job{RunID: "b", Kind: JobStart, Key: "B"})
	// Neither gate is open: both jobs are inside Execute at once.
	got := []string{g.next(t).RunID, g.next(t).RunID}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("started %v, want a and b together", got)
	}
	if st := p.Status(); st.Busy != 2 {
		t.Fatalf("busy = %d, want 2", st.Busy)
	}
	g.open("a")
	g.open("b")
	waitFor(t, "the queue to empty", idle(p))
}

func TestKeyFIFOAndNoHeadOfLineBlocking(t *testing.T) {
	g := newGate()
	p := startPool(t, Config{Workers: 2, Executor: g})
	submit(t, p, Job{RunID: "a1", Kind: JobStart, Key: "A"})
	g.next(t)
	// a2 heads the queue but waits for A; b1 behind it runs at once.
	submit(t, p,
		Job{RunID: "a2", Kind: JobStart, Key: "A"},
		Job{RunID: "b1", Kind: JobStart, Key: "B"},
		Job{RunID: "a3", Kind: JobStart, Key: "A"},
		Job{RunID: "b2", Kind: JobStart, Key: "B"})
	if j := g.next(t); j.RunID != "b1" {
		t.Fatalf("second job = %s, want b1", j.RunID)
	}
	if q := queued(p); !slices.Equal(q, []string{"a2", "a3", "b2"}) {
		t.Fatalf("queued = %v", q)
	}
	g.open("a1") // A is free: a2, not a3, is next
	if j := g.next(t); j.RunID != "a2" {
		t.Fatalf("after a1: %s, want a2", j.RunID)
	}
	g.open("b1")
	if j := g.next(t); j.RunID != "b2" {
		t.Fatalf("after b1: %s, want b2", j.RunID)
	}
	g.open("a2")
	if j := g.next(t); j.RunID != "a3" {
		t.Fatalf("after a2: %s, want a3", j.RunID)
	}
	g.open("b2")
	g.open("a3")
	waitFor(t, "the queue to empty", idle(p))
	g.check(t, "a1", "b1", "a2", "b2", "a3")
}

func queued(p *LocalQueue) []string {
	var ids []string
	for _, j := range p.Status().Queued {
		ids = append(ids, j.RunID)
	}
	return ids
}

func TestKeyParkedRunFreesItsKeyAndAnswerWaitsForIt(t *testing.T) {
	g := newGate()
	g.outcome = func(j Job) Outcome {
		if j.RunID == "a1" && j.Kind == JobStart {
			return OutcomeParked
		}
		return OutcomeDone
	}
	// Answer's job comes without a key: KeyOf gives it.
	keyOf := func(j Job) string { return j.RunID[:1] }
	p := startPool(t, Config{Workers: 2, Executor: g, KeyOf: keyOf})
	submit(t, p, Job{RunID: "a1", Kind: JobStart})
	g.next(t)
	g.open("a1")
	waitFor(t, "a1 to park", func() bool { return slices.Equal(p.Status().Parked, []string{"a1"}) })
	// Parked, a1 holds no key: a2 of the same repository runs.
	submit(t, p, Job{RunID: "a2", Kind: JobStart})
	if j := g.next(t); j.RunID != "a2" || j.Key != "a" {
		t.Fatalf("job = %+v, want a2 with key a", j)
	}
	if err := p.Answer("a1", true); err != nil {
		t.Fatal(err)
	}
	// The answer waits for a2 to give the key back; z passes it.
	submit(t, p, Job{RunID: "z1", Kind: JobStart})
	if j := g.next(t); j.RunID != "z1" {
		t.Fatalf("job = %s while a2 holds a, want z1", j.RunID)
	}
	if q := p.Status().Queued; len(q) != 1 || q[0].RunID != "a1" || q[0].Kind != JobAnswer || q[0].Key != "a" {
		t.Fatalf("queued = %+v, want a1's answer with key a", q)
	}
	g.open("a2")
	if j := g.next(t); j.RunID != "a1" || j.Kind != JobAnswer {
		t.Fatalf("job = %+v, want a1's answer", j)
	}
	g.open("a1")
	g.open("z1")
	waitFor(t, "the queue to empty", idle(p))
	g.check(t, "a1", "a2", "z1", "a1")
}

func TestKeyJournalRoundTrip(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "store.serve.json")
	g := newGate()
	p := startPool(t, Config{Workers: 1, Executor: g, Journal: journal})
	submit(t, p, Job{RunID: "a1", Kind: JobStart, Key: "/r/a"}, Job{RunID: "b1", Kind: JobResume, Key: "/r/b"})
	g.next(t)
	// A second process reads the journal while a1 executes.
	p2, err := New(Config{Workers: 1, Executor: newGate(), Journal: journal,
		KeyOf: func(Job) string { t.Error("KeyOf called for a job with a key"); return "" }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range p2.Status().Queued {
		got[j.RunID] = j.Key
	}
	if want := map[string]string{"a1": "/r/a", "b1": "/r/b"}; len(got) != 2 || got["a1"] != want["a1"] || got["b1"] != want["b1"] {
		t.Fatalf("recovered keys = %v, want %v", got, want)
	}
}

func TestKeyOldJournalLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.serve.json")
	// A journal written before jobs had keys.
	old := `{"version":1,"active":[{"run_id":"a1","kind":"start","spec":{"Goal":"x"}}],"queued":[{"run_id":"b1","kind":"resume"}]}`
	if err := writeFile(path, old); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Executor: newGate(), Journal: path})
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Status().Queued; len(q) != 2 || q[0].RunID != "a1" || q[0].Key != "" || !q[0].Recovered || string(q[0].Spec) != `{"Goal":"x"}` {
		t.Fatalf("without KeyOf: queued = %+v", q)
	}
	p, err = New(Config{Executor: newGate(), Journal: path, KeyOf: func(Job) string { return "/repo" }})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Status().Queued
	if len(q) != 2 || q[0].Key != "/repo" || q[1].Key != "/repo" {
		t.Fatalf("with KeyOf: queued = %+v, want both keyed /repo", q)
	}
	// And a path with keys reads back as it was written.
	var j journal
	j.Queued = q
	if err := writeJournal(path, j); err != nil {
		t.Fatal(err)
	}
	b, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Queued) != 2 || b.Queued[0].Key != "/repo" {
		t.Fatalf("round trip = %+v", b.Queued)
	}
}
