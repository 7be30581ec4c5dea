package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
)

// JobKind says what a Job does with its run.
type JobKind string

// The kinds of job.
const (
	JobStart  JobKind = "start"  // start a new run from Spec
	JobResume JobKind = "resume" // resume the run from its latest checkpoint
	JobAnswer JobKind = "answer" // resume the run with Answer for its pending interrupt
)

// Job is one unit of work for a worker.
type Job struct {
	RunID  string          `json:"run_id"`
	Kind   JobKind         `json:"kind"`
	Spec   json.RawMessage `json:"spec,omitempty"`   // JobStart: what the submitter sent
	Answer json.RawMessage `json:"answer,omitempty"` // JobAnswer: the value for the interrupt
	// Key names what the run works on (for gaffer, the absolute,
	// symlink-resolved root of its repository): the pool never executes
	// two jobs with the same Key at once. "" shares nothing.
	Key string `json:"key,omitempty"`
	// Group names what several keys share (for gaffer, the repository of
	// runs that each work in their own work tree): with
	// Config.MaxPerGroup, at most that many jobs of one Group execute at
	// once. "" is in no group.
	Group string `json:"group,omitempty"`
	// Recovered is set on jobs read back from the journal: a previous
	// process was executing (or had queued) them when it stopped.
	Recovered bool `json:"recovered,omitempty"`
	// Queued is when the job last entered the queue, by Config.Now: when
	// it was submitted or answered, or when a drain or the machine's error
	// (Config.Retry) put it back. The pool sets it, whatever the
	// submitter sent; it is journaled, so a job left queued keeps it
	// across restarts. A job a previous process was executing, and a job
	// journaled before the field existed, entered the queue when New read
	// the journal. (serve/pgqueue keeps the time in its jobs table, by the
	// database's clock, and fills this in its Status.)
	Queued time.Time `json:"queued_at,omitzero"`
	// TraceParent and TraceState are the W3C trace context (traceparent,
	// tracestate) of the span that submitted the job, when the submitter
	// traces (package telemetry): the worker links the run's trace to it.
	// Empty when the submitter's telemetry is off; a job keeps them across
	// restarts and takeovers.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// Outcome is how an executed job ended.
type Outcome int

// The outcomes of Execute.
const (
	OutcomeDone   Outcome = iota // the run finished (completed, failed, halted, ...)
	OutcomeParked                // the run waits for an answer; Answer will queue it again
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDone:
		return "done"
	case OutcomeParked:
		return "parked"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Executor runs jobs. Execute returns when the run finishes, stops to wait
// for an answer (OutcomeParked) or its context ends; it must stop promptly
// when ctx is done, leaving the run resumable from its latest checkpoint.
type Executor interface {
	Execute(ctx context.Context, job Job) (Outcome, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, job Job) (Outcome, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, job Job) (Outcome, error) { return f(ctx, job) }

// Gauges receives the pool's queue length, the time its oldest queued job
// began to wait, and its worker counts (metrics.Metrics implements it).
type Gauges interface {
	SetQueueLength(n int)
	// SetQueueOldest is given the earliest Job.Queued of the queued jobs,
	// the zero time when none is queued; the gauges measure the age from
	// it when they are read.
	SetQueueOldest(since time.Time)
	SetWorkers(total, busy int)
}

// Config configures a LocalQueue.
type Config struct {
	Workers  int      // at least 1; default 1
	Executor Executor // required
	Journal  string   // the journal file (JournalPath); "" keeps nothing
	Logger   *slog.Logger
	Gauges   Gauges // optional
	// KeyOf, when set, gives the Key of a job that comes without one: an
	// Answer, or a job read from a journal written before jobs had keys.
	KeyOf func(Job) string
	// GroupOf, when set, gives the Group of a job that comes without one,
	// as KeyOf its Key.
	GroupOf func(Job) string
	// MaxPerGroup, when above 0, is how many jobs of one Group execute at
	// once at most (gaffer's max_runs_per_repo).
	MaxPerGroup int
	// Retry, when set, reports whether a job's error was the machine's (a
	// full store disk) rather than the run's: the job goes back to the head
	// of the queue and the pool takes no job for RetryAfter, so the queued
	// runs wait for room instead of failing one after the other.
	Retry func(error) bool
	// RetryAfter is the pause after a Retry error; default 5s.
	RetryAfter time.Duration
	// Now is the clock of Job.Queued; default time.Now.
	Now func() time.Time
}

func (c *Config) validate() error {
	if c.Executor == nil {
		return fmt.Errorf("%w: no executor", ErrInvalidConfig)
	}
	if c.MaxPerGroup < 0 {
		return fmt.Errorf("%w: at most %d runs of a group", ErrInvalidConfig, c.MaxPerGroup)
	}
	if c.Workers < 0 {
		return fmt.Errorf("%w: %d workers", ErrInvalidConfig, c.Workers)
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
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// active is one job a worker executes.
type active struct {
	job    Job
	cancel context.CancelCauseFunc
}

// LocalQueue queues jobs and executes them on Config.Workers workers.
type LocalQueue struct {
	cfg Config

	mu       sync.Mutex
	queue    []Job
	active   map[string]*active // by run id
	held     map[string]string  // Key → the run id executing with it
	groups   map[string]int     // Group → how many of its jobs execute
	parked   map[string]bool
	draining bool
	busy     int
	lastErr  map[string]string // run id → the error its last job ended with
	paused   time.Time         // no job is taken before this (a Retry error)
	retrying string            // the last Retry error, until a job ends without one

	notify  chan struct{}
	stop    chan struct{} // closed by Drain: workers stop taking jobs
	wg      sync.WaitGroup
	started bool
}

// Status is a snapshot of the pool.
type Status struct {
	Workers  int      `json:"workers"`
	Busy     int      `json:"busy"`
	Queued   []Job    `json:"queued"`
	Active   []string `json:"active"`
	Parked   []string `json:"parked"`
	Draining bool     `json:"draining"`
	// Retrying is the error of the job waiting to be tried again (a Retry
	// error), until a job ends without one; "" otherwise.
	Retrying string `json:"retrying,omitempty"`
}

// New reads the journal and returns a pool whose queue holds the jobs a
// previous process left: the ones it was executing first (Recovered), then
// the ones it had queued. The queued ones keep their Job.Queued; the ones
// that were executing, and any journaled without the time, are queued now.
func New(cfg Config) (*LocalQueue, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	j, err := readJournal(cfg.Journal)
	if err != nil {
		return nil, err
	}
	p := &LocalQueue{
		cfg:     cfg,
		active:  map[string]*active{},
		held:    map[string]string{},
		groups:  map[string]int{},
		parked:  map[string]bool{},
		lastErr: map[string]string{},
		notify:  make(chan struct{}, cfg.Workers),
		stop:    make(chan struct{}),
	}
	seen := map[string]bool{}
	now := cfg.Now()
	for i, list := range [][]Job{j.Active, j.Queued} {
		for _, job := range list {
			if seen[job.RunID] {
				continue
			}
			seen[job.RunID] = true
			job.Recovered = true
			if i == 0 || job.Queued.IsZero() {
				// It was executing, not waiting; or a journal from
				// before Queued: its wait begins now.
				job.Queued = now
			}
			p.keyLocked(&job)
			p.queue = append(p.queue, job)
		}
	}
	return p, nil
}

// Start starts the workers. Their jobs run under ctx; cancelling it stops
// them at once (use Drain to stop at checkpoints).
func (p *LocalQueue) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("serve: pool already started")
	}
	p.started = true
	if err := p.persistLocked(); err != nil {
		return err
	}
	p.gaugesLocked()
	for range p.cfg.Workers {
		p.wg.Add(1)
		go p.worker(ctx)
	}
	p.signal(len(p.queue))
	return nil
}

// Submit queues a job. It fails with ErrDuplicate when the run is already
// queued or executing, and with ErrDraining once Drain has begun.
func (p *LocalQueue) Submit(job Job) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.draining {
		return ErrDraining
	}
	if job.RunID == "" {
		return fmt.Errorf("%w: job without a run id", ErrInvalidConfig)
	}
	if p.active[job.RunID] != nil || slices.ContainsFunc(p.queue, func(j Job) bool { return j.RunID == job.RunID }) {
		return fmt.Errorf("%w: %s", ErrDuplicate, job.RunID)
	}
	p.keyLocked(&job)
	job.Queued = p.cfg.Now()
	delete(p.parked, job.RunID)
	delete(p.lastErr, job.RunID)
	p.queue = append(p.queue, job)
	if err := p.persistLocked(); err != nil {
		p.queue = p.queue[:len(p.queue)-1]
		return err
	}
	p.gaugesLocked()
	p.signal(1)
	return nil
}

// Answer queues the answer to a parked run's pending interrupt, which
// wakes it.
func (p *LocalQueue) Answer(runID string, answer any) error {
	b, err := json.Marshal(answer)
	if err != nil {
		return fmt.Errorf("serve: encode answer: %w", err)
	}
	return p.Submit(Job{RunID: runID, Kind: JobAnswer, Answer: b})
}

// Cancel removes a queued job of the run, or cancels its executing job
// (context cause ErrCancelled). It reports whether it found the run.
func (p *LocalQueue) Cancel(runID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a := p.active[runID]; a != nil {
		a.cancel(ErrCancelled)
		return true
	}
	i := slices.IndexFunc(p.queue, func(j Job) bool { return j.RunID == runID })
	if i < 0 {
		return false
	}
	p.queue = slices.Delete(p.queue, i, i+1)
	_ = p.persistLocked()
	p.gaugesLocked()
	return true
}

// Observe watches the runtime's events: while draining, a checkpoint saved
// for an executing run cancels that run (cause ErrDrained), so it stops at
// the checkpoint. Pass it to graph.Runner.Subscribe.
func (p *LocalQueue) Observe(e graph.Event) {
	if e.Kind != graph.CheckpointSaved {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.draining {
		return
	}
	if a := p.active[e.RunID]; a != nil {
		a.cancel(ErrDrained)
	}
}

// Drain stops taking work and waits for the executing runs to reach their
// next checkpoint, at most timeout; then it cancels the rest and waits for
// the workers. Jobs cut off stay in the journal for the next process.
func (p *LocalQueue) Drain(timeout time.Duration) {
	p.mu.Lock()
	if !p.draining {
		p.draining = true
		close(p.stop)
	}
	p.mu.Unlock()
	WaitOrCut(timeout, p.wg.Wait, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, a := range p.active {
			a.cancel(ErrDrained)
		}
	})
}

// WaitOrCut is the second half of a queue's Drain: it waits for wait to
// return, at most timeout, then calls cut (which cancels the runs still
// executing, cause ErrDrained) and waits for wait again.
func WaitOrCut(timeout time.Duration, wait, cut func()) {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	cut()
	<-done
}

// Wait waits for the workers to stop (after Drain, or when Start's context ends).
func (p *LocalQueue) Wait() { p.wg.Wait() }

// Status returns a snapshot of the pool.
func (p *LocalQueue) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Status{Workers: p.cfg.Workers, Busy: p.busy, Queued: slices.Clone(p.queue), Draining: p.draining, Retrying: p.retrying}
	for id := range p.active {
		s.Active = append(s.Active, id)
	}
	for id := range p.parked {
		s.Parked = append(s.Parked, id)
	}
	slices.Sort(s.Active)
	slices.Sort(s.Parked)
	return s
}

// LastError returns the error the run's last job ended with, if any.
func (p *LocalQueue) LastError(runID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr[runID]
}

func (p *LocalQueue) worker(ctx context.Context) {
	defer p.wg.Done()
	for {
		job, jctx, cancel, ok := p.next(ctx)
		if !ok {
			return
		}
		p.execute(ctx, jctx, cancel, job)
	}
}

// next takes the first queued job whose key is free, waiting for one, and
// registers it as active (holding its key) with its own context; ok is
// false when the pool stops. Jobs of a busy key keep their places: jobs of
// one key run in queue order, and a job waiting for its key never holds up
// the jobs of other keys.
func (p *LocalQueue) next(ctx context.Context) (job Job, jctx context.Context, cancel context.CancelCauseFunc, ok bool) {
	for {
		p.mu.Lock()
		if p.draining || ctx.Err() != nil {
			p.mu.Unlock()
			return Job{}, nil, nil, false
		}
		if wait := time.Until(p.paused); wait > 0 {
			p.mu.Unlock()
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-p.stop:
			case <-ctx.Done():
			}
			timer.Stop()
			continue
		}
		if i := slices.IndexFunc(p.queue, p.freeLocked); i >= 0 {
			job = p.queue[i]
			p.queue = slices.Delete(p.queue, i, i+1)
			jctx, cancel = context.WithCancelCause(ctx)
			p.active[job.RunID] = &active{job: job, cancel: cancel}
			if job.Key != "" {
				p.held[job.Key] = job.RunID
			}
			if job.Group != "" {
				p.groups[job.Group]++
			}
			p.busy++
			if err := p.persistLocked(); err != nil {
				p.cfg.Logger.Error("serve: journal", "err", err)
			}
			p.gaugesLocked()
			p.mu.Unlock()
			return job, jctx, cancel, true
		}
		p.mu.Unlock()
		select {
		case <-p.notify:
		case <-p.stop:
		case <-ctx.Done():
		}
	}
}

func (p *LocalQueue) execute(ctx, jctx context.Context, cancel context.CancelCauseFunc, job Job) {
	log := p.cfg.Logger.With("run", job.RunID, "job", string(job.Kind))
	log.Info("run executing", "recovered", job.Recovered)
	outcome, err := p.cfg.Executor.Execute(jctx, job)
	cause := context.Cause(jctx)
	cancel(nil)

	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.active, job.RunID)
	if job.Key != "" && p.held[job.Key] == job.RunID {
		delete(p.held, job.Key)
	}
	if job.Group != "" {
		if p.groups[job.Group]--; p.groups[job.Group] <= 0 {
			delete(p.groups, job.Group)
		}
	}
	p.busy--
	// The key is free again: wake the idle workers, a queued job may now
	// be theirs.
	defer p.signal(p.cfg.Workers)
	switch {
	case errors.Is(cause, ErrDrained) || (err != nil && ctx.Err() != nil):
		// Cut off: keep the job for the next process.
		log.Info("run stopped for drain; it resumes when serve starts again", "err", err)
		job.Recovered = true
		job.Queued = p.cfg.Now()
		p.queue = append([]Job{job}, p.queue...)
	case err != nil && p.cfg.Retry != nil && p.cfg.Retry(err):
		// The machine's fault, not the run's: keep the job at the head and
		// take no job until RetryAfter.
		log.Error("run stopped by the machine; serve tries it again", "err", err, "retry_in", p.cfg.RetryAfter.String(),
			"queued", len(p.queue)+1)
		p.lastErr[job.RunID] = err.Error()
		job.Recovered = true
		job.Queued = p.cfg.Now()
		p.queue = append([]Job{job}, p.queue...)
		p.paused = time.Now().Add(p.cfg.RetryAfter)
		p.retrying = err.Error()
	case err != nil:
		log.Error("run failed", "err", err)
		p.lastErr[job.RunID] = err.Error()
	case outcome == OutcomeParked:
		log.Info("run waiting for approval")
		p.parked[job.RunID] = true
	default:
		log.Info("run finished")
	}
	if p.paused.IsZero() || !time.Now().Before(p.paused) {
		p.retrying = "" // this job ended without the machine's error
	}
	if perr := p.persistLocked(); perr != nil {
		log.Error("serve: journal", "err", perr)
	}
	p.gaugesLocked()
}

// freeLocked reports whether job's key is free, and its group below
// Config.MaxPerGroup; the caller holds mu.
func (p *LocalQueue) freeLocked(job Job) bool {
	if job.Group != "" && p.cfg.MaxPerGroup > 0 && p.groups[job.Group] >= p.cfg.MaxPerGroup {
		return false
	}
	if job.Key == "" {
		return true
	}
	_, busy := p.held[job.Key]
	return !busy
}

// keyLocked fills in the key and group of a job without them from
// Config.KeyOf and Config.GroupOf.
func (p *LocalQueue) keyLocked(job *Job) {
	if job.Key == "" && p.cfg.KeyOf != nil {
		job.Key = p.cfg.KeyOf(*job)
	}
	if job.Group == "" && p.cfg.GroupOf != nil {
		job.Group = p.cfg.GroupOf(*job)
	}
}

// persistLocked writes the journal; the caller holds mu.
func (p *LocalQueue) persistLocked() error {
	j := journal{Queued: slices.Clone(p.queue)}
	for _, a := range p.active {
		j.Active = append(j.Active, a.job)
	}
	slices.SortFunc(j.Active, func(a, b Job) int {
		switch {
		case a.RunID < b.RunID:
			return -1
		case a.RunID > b.RunID:
			return 1
		}
		return 0
	})
	return writeJournal(p.cfg.Journal, j)
}

func (p *LocalQueue) gaugesLocked() {
	if p.cfg.Gauges == nil {
		return
	}
	p.cfg.Gauges.SetQueueLength(len(p.queue))
	p.cfg.Gauges.SetQueueOldest(p.oldestLocked())
	p.cfg.Gauges.SetWorkers(p.cfg.Workers, p.busy)
}

// oldestLocked returns the earliest Job.Queued of the queued jobs, the zero
// time when none is queued. It is not always the head's: a job put back
// goes to the head with the time it went back.
func (p *LocalQueue) oldestLocked() time.Time {
	var oldest time.Time
	for _, j := range p.queue {
		if oldest.IsZero() || j.Queued.Before(oldest) {
			oldest = j.Queued
		}
	}
	return oldest
}

// signal wakes up to n idle workers.
func (p *LocalQueue) signal(n int) {
	for range n {
		select {
		case p.notify <- struct{}{}:
		default:
			return
		}
	}
}
