package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/serve"
	"github.com/gaffer-dev/gaffer/serve/pgqueue"
	"github.com/gaffer-dev/gaffer/state"
)

// Pool is serve's Service: it queues the runs it is asked to start,
// resume or answer, and its workers execute them on the same Host
// operations a terminal calls (Start, Resume, Answer, Cancel). Reads go
// to the Host, with the runs still queued told as such.
type Pool struct {
	h   *host.Host
	q   serve.Queue
	log *slog.Logger
	// key is the repository's key (RepoKey): the pool key of runs in
	// place, which share the user's checkout and execute one at a time,
	// and the group of every run (Config.MaxRunsPerRepo). A run in
	// its own work tree has that tree as its key: the runs of one
	// repository execute at once.
	key string
	// client is a pool that hands its work to the serves through the
	// database (Config.Client).
	client bool
}

// Config makes a Pool.
type Config struct {
	Workers int
	// MaxRunsPerRepo, when above 0, is how many runs of the repository
	// execute at once at most (max_runs_per_repo).
	MaxRunsPerRepo int
	Logger         *slog.Logger
	Gauges         serve.Gauges
	// Client makes the pool of a command on a database store with no
	// serve on this host holding it: its queue is not started, and what
	// it queues, answers and cancels goes to the serves of every host
	// through the database.
	Client bool
	// Hosts configures the PostgreSQL queue of a host on a database
	// store (see multihost.go); unused with a store directory.
	Hosts HostsConfig
}

// New makes the Pool of h, reading back the journal beside its store
// (the runs a previous serve left queued or executing).
func New(h *host.Host, cfg Config) (*Pool, error) {
	key, err := host.RepoKey(h.Repo().Root())
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = h.Logger()
	}
	p := &Pool{h: h, log: cfg.Logger, key: key, client: cfg.Client}
	if q, ok, err := p.dbQueue(cfg); err != nil {
		return nil, err
	} else if ok {
		p.q = q
		return p, nil
	}
	p.q, err = serve.New(serve.Config{Workers: cfg.Workers, Executor: executor{p}, Journal: serve.JournalPath(h.StoreDir()), Logger: cfg.Logger,
		Gauges: cfg.Gauges, KeyOf: p.keyOf, GroupOf: func(serve.Job) string { return key }, MaxPerGroup: cfg.MaxRunsPerRepo,
		Retry: machineFault})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// keyOf is the pool key of job: its run's own work tree, or for a run in
// place the repository's key.
func (p *Pool) keyOf(job serve.Job) string {
	if job.Kind == serve.JobStart {
		if spec, err := decodeJob(job.Spec); err == nil && spec.InPlace {
			return p.key
		}
		if _, err := p.h.State(context.Background(), host.RunRequest{RunID: job.RunID}); err != nil {
			return p.h.WorkTreeDir(job.RunID)
		}
	}
	snap, err := p.h.State(context.Background(), host.RunRequest{RunID: job.RunID})
	if err != nil || snap.State.Run.WorkTree == "" {
		return p.key
	}
	return snap.State.Run.WorkTree
}

// Queue is the pool of workers (start, drain and watch it): the file
// journal's, or the database's on a PostgreSQL store.
func (p *Pool) Queue() serve.Queue { return p.q }

// pending returns "queued" for a run that waits in the queue and
// "starting" for one a worker took, while neither has a checkpoint yet;
// "" otherwise.
func (p *Pool) pending(ctx context.Context, runID string) string {
	if runID == "" {
		return ""
	}
	st := p.q.Status()
	status := ""
	for _, j := range st.Queued {
		if j.RunID == runID {
			status = host.StatusQueued
		}
	}
	for _, id := range st.Active {
		if id == runID {
			status = host.StatusStarting
		}
	}
	if status == "" {
		return ""
	}
	if _, err := p.h.State(ctx, host.RunRequest{RunID: runID}); err == nil {
		return ""
	}
	return status
}

// Start queues a new run: Submit.
func (p *Pool) Start(ctx context.Context, spec host.RunSpec) (host.Outcome, error) {
	return p.Submit(ctx, spec)
}

// Submit queues a new run of the pool's repository.
func (p *Pool) Submit(ctx context.Context, spec host.RunSpec) (host.Outcome, error) {
	if spec.RunID == "" {
		spec.RunID = host.NewRunID(time.Now())
	}
	if spec.Repo != "" && spec.Repo != p.key {
		return host.Outcome{}, errorf(host.Refused, "the gaffer serve holding store %s (pid %d) works in repository %s, not %s; start a serve in %s with a store of its own (gaffer --repo %s serve)",
			p.h.StoreDir(), os.Getpid(), p.key, spec.Repo, spec.Repo, spec.Repo)
	}
	if _, err := p.h.State(ctx, host.RunRequest{RunID: spec.RunID}); err == nil {
		return host.Outcome{}, errorf(host.Refused, "run %s already exists", spec.RunID)
	}
	b, err := encodeJob(spec)
	if err != nil {
		return host.Outcome{}, fmt.Errorf("submit: %w", err)
	}
	job := serve.Job{RunID: spec.RunID, Kind: serve.JobStart, Spec: b, Group: p.key, TraceParent: spec.TraceParent, TraceState: spec.TraceState}
	job.Key = p.keyOf(job)
	if err := p.q.Submit(job); err != nil {
		return host.Outcome{}, errorf(host.Held, "submit: %w", err)
	}
	n := len(p.q.Status().Queued)
	return host.Outcome{RunID: spec.RunID, Kind: host.HandedOn,
		Message: fmt.Sprintf("Run %s queued (%d waiting for a worker or for their repository).", spec.RunID, n)}, nil
}

// Resume queues a stopped run to continue.
func (p *Pool) Resume(ctx context.Context, req host.RunRequest) (host.Outcome, error) {
	id, err := p.h.Pick(ctx, req.RunID, "to resume", func(s state.RunStatus) bool { return !s.Terminal() })
	if err != nil {
		return host.Outcome{}, err
	}
	snap, err := p.h.State(ctx, host.RunRequest{RunID: id})
	if err != nil {
		return host.Outcome{}, err
	}
	if st := host.ViewStatus(snap); st.Terminal() {
		return host.Outcome{}, errorf(host.Refused, "run %s has already finished: %s", id, st)
	} else if st == state.RunAwaitingApproval {
		return host.Outcome{}, errorf(host.Waiting, "run %s is waiting for approval; answer with gaffer approve or reject", id)
	}
	job := serve.Job{RunID: id, Kind: serve.JobResume, Group: p.key}
	job.Key = p.keyOf(job)
	if err := p.q.Submit(job); err != nil {
		return host.Outcome{}, errorf(host.Held, "resume: %w", err)
	}
	return host.Outcome{RunID: id, Kind: host.HandedOn, Message: fmt.Sprintf("Run %s queued to resume in %s.", id, p.serveName())}, nil
}

// Answer queues a human's answer to a parked run.
func (p *Pool) Answer(ctx context.Context, req host.AnswerRequest) (host.Outcome, error) {
	if err := req.Check(); err != nil {
		return host.Outcome{}, err
	}
	if st := p.pending(ctx, req.RunID); st != "" {
		// Submitted, without a checkpoint yet: there is no plan to answer.
		return host.Outcome{}, errorf(host.Refused, "run %s is not waiting for approval (it is %s)", req.RunID, st)
	}
	id, err := p.h.Pick(ctx, req.RunID, "waiting for approval", func(s state.RunStatus) bool { return s == state.RunAwaitingApproval })
	if err != nil {
		return host.Outcome{}, err
	}
	snap, err := p.h.State(ctx, host.RunRequest{RunID: id})
	if err != nil {
		return host.Outcome{}, err
	}
	if snap.Interrupt == nil || host.ViewStatus(snap) != state.RunAwaitingApproval {
		return host.Outcome{}, errorf(host.Refused, "run %s is not waiting for approval (it is %s)", id, host.ViewStatus(snap))
	}
	if req.Verdict.Decides() && snap.Interrupt.Node != nodes.NodeRecover {
		return host.Outcome{}, host.NotDeciding(id)
	}
	req.RunID = id
	if err := p.answer(ctx, id, req); errors.Is(err, serve.ErrDuplicate) {
		return host.Outcome{}, errorf(host.Held, "run %s was answered already: the answer waits for a worker of %s (`gaffer status %s` tells when the run goes on)", id, p.serveName(), id)
	} else if err != nil {
		return host.Outcome{}, errorf(host.Held, "run %s: %w", id, err)
	}
	return host.Outcome{RunID: id, Kind: host.HandedOn, Message: fmt.Sprintf("Run %s %s; %s continues it.", id, host.AnswerVerb(req.Answer()), p.serveName())}, nil
}

// answerWait bounds how long answer waits for the job that parked a run
// to end.
const answerWait = 10 * time.Second

// answer queues ans for run id. The checkpoint that parks a run is
// written before its worker's job returns: an answer that comes in
// between (the status said awaiting_approval) waits for the job to end
// rather than being refused as a duplicate.
func (p *Pool) answer(ctx context.Context, id string, ans host.AnswerRequest) error {
	deadline := time.Now().Add(answerWait)
	for {
		err := p.q.Answer(id, ans)
		if !errors.Is(err, serve.ErrDuplicate) || !p.parking(ctx, id) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// parking reports whether a worker executes run id while its checkpoint
// waits for an answer: the job that parked it has yet to end.
func (p *Pool) parking(ctx context.Context, id string) bool {
	if !slices.Contains(p.q.Status().Active, id) {
		return false
	}
	snap, err := p.h.State(ctx, host.RunRequest{RunID: id})
	return err == nil && snap.Interrupt != nil && host.ViewStatus(snap) == state.RunAwaitingApproval
}

// Cancel takes a run out of the queue, stops it on its worker (which
// writes the cancel checkpoint), or cancels it here.
func (p *Pool) Cancel(ctx context.Context, req host.RunRequest) (host.Outcome, error) {
	if req.RunID != "" && p.q.Cancel(req.RunID) {
		if _, err := p.h.State(ctx, host.RunRequest{RunID: req.RunID}); err != nil {
			return host.Outcome{RunID: req.RunID, Kind: host.Cancelled, Message: fmt.Sprintf("Run %s removed from the queue.", req.RunID)}, nil
		}
		for _, id := range p.q.Status().Active {
			if id == req.RunID {
				return host.Outcome{RunID: req.RunID, Kind: host.HandedOn, Message: fmt.Sprintf("Run %s is being cancelled.", req.RunID)}, nil
			}
		}
	}
	return p.h.Cancel(ctx, req)
}

// Status is a run's status; a run queued without a checkpoint yet is
// Pending, "queued" or "starting".
func (p *Pool) Status(ctx context.Context, req host.RunRequest) (host.RunStatus, error) {
	if st := p.pending(ctx, req.RunID); st != "" {
		rs := host.RunStatus{Status: st, Pending: true}
		rs.Snapshot.RunID = req.RunID
		return rs, nil
	}
	rs, err := p.h.Status(ctx, req)
	if err != nil && req.RunID != "" && host.CodeOf(err) == host.Refused {
		if msg := p.q.LastError(req.RunID); msg != "" {
			// Submitted, and failed before its first checkpoint: say why
			// instead of that there is no such run.
			return rs, errorf(host.Refused, "run %s failed before its first checkpoint: %s; submit it again once that is fixed", req.RunID, msg)
		}
	}
	return rs, err
}

// List is the Host's.
func (p *Pool) List(ctx context.Context, req host.ListRequest) ([]host.ListEntry, error) {
	return p.h.List(ctx, req)
}

// State is the Host's.
func (p *Pool) State(ctx context.Context, req host.RunRequest) (graph.Snapshot[state.ExecutionState], error) {
	return p.h.State(ctx, req)
}

// Delete is the Host's, for a run the pool neither holds in its queue nor
// executes.
func (p *Pool) Delete(ctx context.Context, req host.RunRequest) error {
	st := p.q.Status()
	for _, j := range st.Queued {
		if j.RunID == req.RunID {
			return errorf(host.Held, "run %s is queued in %s; cancel it first", req.RunID, p.serveName())
		}
	}
	if slices.Contains(st.Active, req.RunID) {
		return errorf(host.Held, "run %s is executing in %s; cancel it first", req.RunID, p.serveName())
	}
	return p.h.Delete(ctx, req)
}

// DeleteRuns is the Host's, through p: a run queued or executing is
// refused (Delete).
func (p *Pool) DeleteRuns(ctx context.Context, req host.DeleteRequest) (host.Deleted, error) {
	return p.h.GitOps(p).DeleteRuns(ctx, req)
}

// Prune is the Host's, through p: the runs queued or executing own
// their work trees and branches before their first checkpoint.
func (p *Pool) Prune(ctx context.Context, req host.PruneRequest) (host.Pruned, error) {
	st := p.q.Status()
	req.Owned = slices.Clip(req.Owned)
	for _, j := range st.Queued {
		req.Owned = append(req.Owned, j.RunID)
	}
	req.Owned = append(req.Owned, st.Active...)
	return p.h.GitOps(p).Prune(ctx, req)
}

// Merge is the Host's, through p.
func (p *Pool) Merge(ctx context.Context, req host.MergeRequest) (host.Merged, error) {
	return p.h.GitOps(p).Merge(ctx, req)
}

// Diff is the Host's, through p.
func (p *Pool) Diff(ctx context.Context, req host.DiffRequest) (host.RunDiff, error) {
	return p.h.GitOps(p).Diff(ctx, req)
}

// History is the Host's.
func (p *Pool) History(ctx context.Context, req host.RunRequest) ([]host.Checkpoint, error) {
	return p.h.History(ctx, req)
}

// Fork is the Host's: refused (Held) while a worker runs in the work tree.
func (p *Pool) Fork(ctx context.Context, req host.ForkRequest) (host.Forked, error) {
	return p.h.Fork(ctx, req)
}

// executor executes the pool's jobs with the Host's operations.
type executor struct{ p *Pool }

// Execute runs one job: start, resume or answer a run, until it finishes
// or waits for a human (OutcomeParked).
func (x executor) Execute(ctx context.Context, job serve.Job) (serve.Outcome, error) {
	p := x.p
	h := p.h
	id := job.RunID
	if job.Group != "" && job.Group != p.key || job.Group == "" && job.Key != p.key {
		// A job journaled by a serve of another repository on this store:
		// it works on this repository now, without its key's exclusion.
		p.log.Warn("job keyed for another repository", "run", id, "key", job.Key, "repo", p.key)
	}
	if p.finished(ctx, job) {
		return serve.OutcomeDone, nil // its holder finished it before it stopped
	}
	if err := h.LinkTrace(id, job.TraceParent, job.TraceState); err != nil {
		// A bad trace context costs the link, never the run.
		p.log.Warn("the job's trace context is ignored: the run's trace is not linked to its submitter's", "run", id, "err", err)
	}
	out, err := x.drive(ctx, job)
	if errors.Is(context.Cause(ctx), pgqueue.ErrLost) {
		h.DropClone(id) // another host took the run over: its work is on the remote
	}
	if errors.Is(context.Cause(ctx), serve.ErrCancelled) {
		if _, cerr := h.Cancel(context.WithoutCancel(ctx), host.RunRequest{RunID: id}); cerr != nil {
			return serve.OutcomeDone, fmt.Errorf("run %s: cancel: %w", id, cerr)
		}
		return serve.OutcomeDone, nil
	}
	if ctx.Err() != nil {
		return serve.OutcomeDone, fmt.Errorf("run %s stopped: %w", id, context.Cause(ctx))
	}
	if err != nil {
		return serve.OutcomeDone, err
	}
	switch out.Kind {
	case host.Parked, host.Asking:
		return serve.OutcomeParked, nil
	case host.Stopped, host.Interrupted:
		return serve.OutcomeDone, out.Err
	case host.Halted, host.Rejected, host.Cancelled:
		p.log.Info("run ended", "run", id, "outcome", out.Kind, "msg", out.Message)
	}
	if out.State != nil && out.State.Status.Terminal() {
		if l := host.BranchHint(*out.State, func(args ...string) string { return "gaffer " + strings.Join(args, " ") }); l != "" {
			p.log.Info(l, "run", id)
		}
	}
	return serve.OutcomeDone, nil
}

// drive starts, answers or resumes job's run on the Host, as the job
// says; a job whose options or answer cannot be read is an error.
func (x executor) drive(ctx context.Context, job serve.Job) (host.Outcome, error) {
	h, id := x.p.h, job.RunID
	switch job.Kind {
	case serve.JobStart:
		spec, err := decodeJob(job.Spec)
		if err != nil {
			return host.Outcome{}, fmt.Errorf("run %s: read the submitted options: %w", id, err)
		}
		spec.RunID = id
		if _, serr := h.State(ctx, host.RunRequest{RunID: id}); serr == nil {
			return h.Resume(ctx, host.RunRequest{RunID: id}) // recovered: the run started before the crash
		}
		return h.Start(ctx, spec)
	case serve.JobAnswer:
		var ans host.AnswerRequest // a journal's answer of any version (host.AnswerRequest.UnmarshalJSON)
		if err := json.Unmarshal(job.Answer, &ans); err != nil {
			return host.Outcome{}, fmt.Errorf("run %s: read the answer: %w", id, err)
		}
		snap, serr := h.State(ctx, host.RunRequest{RunID: id})
		if serr == nil && snap.Interrupt == nil && job.Recovered {
			return h.Resume(ctx, host.RunRequest{RunID: id}) // the answer was taken before the crash
		}
		ans.RunID = id
		return h.Answer(ctx, ans)
	}
	return h.Resume(ctx, host.RunRequest{RunID: id})
}

// Pool is a Service, checked by the compiler.
var _ host.Service = (*Pool)(nil)

// errorf returns a *host.Error of code with a formatted cause (%w works).
func errorf(code host.Code, format string, args ...any) error {
	return &host.Error{Code: code, Err: fmt.Errorf(format, args...)}
}
