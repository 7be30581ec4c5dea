package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/metrics"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/serve"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

// DefaultServeMetricsAddr is where `gaffer serve` serves /metrics unless
// --metrics-addr says otherwise.
const defaultServeMetricsAddr = "127.0.0.1:9464"

// ServeOptions are the flags of `gaffer serve`.
type ServeOptions struct {
	Workers      int
	MetricsAddr  string
	DrainTimeout time.Duration
}

func serveCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:  "serve",
		Usage: "own the store and execute submitted runs on a pool of workers, resuming interrupted ones",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "workers", Value: 1, EnvVars: []string{"GAFFER_WORKERS"}, Usage: "runs executed at once: runs of one repository share its work tree and run one at a time, runs of different repositories run in parallel"},
			&ucli.StringFlag{Name: metricsAddrFlag, Value: defaultServeMetricsAddr, EnvVars: []string{"GAFFER_METRICS_ADDR"}, Usage: "serve /metrics, /healthz and /readyz here (127.0.0.1 unless it names a host)"},
			&ucli.DurationFlag{Name: "drain-timeout", Value: 30 * time.Second, EnvVars: []string{"GAFFER_DRAIN_TIMEOUT"}, Usage: "on SIGTERM, how long running steps may take to reach their checkpoint"},
		},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("serve takes no arguments")
			}
			o := ServeOptions{Workers: c.Int("workers"), MetricsAddr: c.String(metricsAddrFlag), DrainTimeout: c.Duration("drain-timeout")}
			if o.Workers < 1 {
				return usageErrorf("--workers %d: want at least 1", o.Workers)
			}
			return Serve(c, io, o)
		},
	}
}

// Serve runs `gaffer serve` until c's context ends (SIGTERM or SIGINT),
// then drains: no new work, running steps finish to their checkpoint
// (at most o.DrainTimeout), leases are released, and it returns nil.
func Serve(c *ucli.Context, io IO, o ServeOptions) error {
	version := ""
	if io.ops != nil {
		version = io.ops.version
	}
	h := &opsHooks{version: version, serving: true}
	sio := io
	sio.ops = h
	log := opsLogger(c, io.Err).With("component", "serve")

	e, err := openEnv(c, sio)
	if err != nil {
		return err
	}
	defer e.Close()

	reg, m, err := h.metrics()
	if err != nil {
		return err
	}
	defer e.runner.Subscribe(m.Observe)()
	defer e.runner.Subscribe(eventLogger(log, "run drained at checkpoint"))()
	if counts, err := statusCounts(c.Context, e); err == nil {
		m.SetRuns(counts)
	}

	key, err := repoKey(e.repo.Root())
	if err != nil {
		return err
	}
	x := &serveExec{owner: e, hooks: h, log: log, key: key}
	pool, err := serve.New(serve.Config{Workers: o.Workers, Executor: x, Journal: serve.JournalPath(e.storeDir), Logger: log, Gauges: m,
		KeyOf: func(serve.Job) string { return x.key }, Retry: ioerr.Machine})
	if err != nil {
		return err
	}
	defer e.runner.Subscribe(pool.Observe)()

	ln, err := metrics.Listen(o.MetricsAddr)
	if err != nil {
		return metricsListenError(o.MetricsAddr, err)
	}
	srv, err := h.listen(e, "serve", func(mux *control.Mux) { x.handle(mux, pool) })
	if err != nil {
		ln.Close()
		return exitf(ExitLocked, "control socket: %w", err)
	}

	// Runs execute under their own context: a signal drains them at their
	// next checkpoint instead of cancelling them mid-step.
	runCtx, stopRuns := context.WithCancel(context.WithoutCancel(c.Context))
	defer stopRuns()
	svcCtx, stopSvc := context.WithCancel(context.WithoutCancel(c.Context))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = srv.Serve(svcCtx) }()
	go func() {
		defer wg.Done()
		ready := func() error {
			st := pool.Status()
			if st.Draining {
				return errors.New("draining")
			}
			if st.Retrying != "" {
				return fmt.Errorf("waiting to try a run again: %s", st.Retrying)
			}
			return nil
		}
		if err := metrics.Serve(svcCtx, ln, metrics.Handler(reg, ready)); err != nil {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	if err := pool.Start(runCtx); err != nil {
		stopSvc()
		wg.Wait()
		return err
	}
	st := pool.Status()
	log.Info("serving", "store", e.storeDir, "socket", srv.Path(), "metrics", "http://"+ln.Addr().String()+"/metrics",
		"workers", o.Workers, "recovered", len(st.Queued), "pid", os.Getpid())
	fmt.Fprintf(io.Out, "gaffer serve: store %s, socket %s, metrics http://%s/metrics, %d worker(s)\n",
		e.storeDir, srv.Path(), ln.Addr(), o.Workers)

	<-c.Context.Done()
	log.Info("draining", "timeout", o.DrainTimeout)
	pool.Drain(o.DrainTimeout)
	stopSvc()
	wg.Wait()
	left := pool.Status().Queued
	log.Info("stopped", "left_for_next_start", len(left))
	fmt.Fprintf(io.Out, "gaffer serve: stopped; %d run(s) resume at the next start\n", len(left))
	return nil
}

// statusCounts counts the store's runs by status, for the runs gauge.
func statusCounts(ctx context.Context, e *env) (map[string]int, error) {
	rs, err := e.runs(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, r := range rs {
		counts[runStatus(r.snap).String()]++
	}
	return counts, nil
}

// repoKey is the pool key of the runs of the repository whose work tree
// is root: its absolute, symlink-resolved path, so that two spellings of
// one work tree are one key.
func repoKey(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("serve: repository %s: %w", root, err)
	}
	key, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("serve: repository %s: %w", root, err)
	}
	return key, nil
}

// serveExec executes the pool's jobs with the workflow commands' own
// functions on a borrowed env of the serve process.
type serveExec struct {
	owner *env
	hooks *opsHooks
	log   *slog.Logger
	// key is the pool key of every job: the runs work on owner's
	// repository (env hands them owner.repo), so they share its work tree
	// and the pool executes them one at a time.
	key string
}

// The statuses status shows for a submitted run without a checkpoint yet:
// waiting for a worker, or taken by one.
const (
	statusQueued   = "queued"
	statusStarting = "starting"
)

func (x *serveExec) env() *env {
	o := x.owner
	return &env{io: IO{Out: io.Discard, Err: io.Discard, Terminal: func() bool { return false }, Keys: o.io.Keys},
		repo: o.repo, repoArg: o.repoArg, storeDir: o.storeDir, store: o.store, runner: o.runner, log: o.log, borrowed: true}
}

// Execute runs one job: start, resume or answer a run, until it finishes
// or waits for approval (OutcomeParked).
func (x *serveExec) Execute(ctx context.Context, job serve.Job) (serve.Outcome, error) {
	e := x.env()
	id := job.RunID
	if job.Key != x.key {
		// A job journaled by a serve of another repository on this store:
		// it works on this repository now, without its key's exclusion.
		x.log.Warn("job keyed for another repository", "run", id, "key", job.Key, "repo", x.key)
	}
	var err error
	switch job.Kind {
	case serve.JobStart:
		var o RunOptions
		if jerr := json.Unmarshal(job.Spec, &o); jerr != nil {
			return serve.OutcomeDone, fmt.Errorf("run %s: read the submitted options: %w", id, jerr)
		}
		o.RunID = id
		if _, serr := e.runner.State(ctx, id); serr == nil {
			err = Resume(ctx, e, id) // recovered: the run started before the crash
		} else {
			err = Run(ctx, e, o)
		}
	case serve.JobAnswer:
		var ans nodes.Answer
		if jerr := json.Unmarshal(job.Answer, &ans); jerr != nil {
			return serve.OutcomeDone, fmt.Errorf("run %s: read the answer: %w", id, jerr)
		}
		snap, serr := e.runner.State(ctx, id)
		if serr == nil && snap.Interrupt == nil && job.Recovered {
			err = Resume(ctx, e, id) // the answer was taken before the crash
		} else {
			err = Answer(ctx, e, id, ans)
		}
	default:
		err = Resume(ctx, e, id)
	}
	if errors.Is(context.Cause(ctx), serve.ErrCancelled) {
		if cerr := Cancel(context.WithoutCancel(ctx), e, id); cerr != nil {
			return serve.OutcomeDone, fmt.Errorf("run %s: cancel: %w", id, cerr)
		}
		return serve.OutcomeDone, nil
	}
	if ctx.Err() != nil {
		return serve.OutcomeDone, fmt.Errorf("run %s stopped: %w", id, context.Cause(ctx))
	}
	var ee *ExitError
	switch {
	case err == nil:
		return serve.OutcomeDone, nil
	case errors.As(err, &ee) && ee.Code == ExitAwaitingApproval:
		return serve.OutcomeParked, nil
	case errors.As(err, &ee) && (ee.Code == ExitHalted || ee.Code == ExitRejected):
		x.log.Info("run ended", "run", id, "exit", ee.Code, "msg", ee.Error())
		return serve.OutcomeDone, nil
	}
	return serve.OutcomeDone, err
}

// pending returns "queued" for a run that waits in the pool's queue and
// "starting" for one a worker took, while neither has a checkpoint yet;
// "" otherwise.
func (x *serveExec) pending(ctx context.Context, pool *serve.Pool, runID string) string {
	if runID == "" {
		return ""
	}
	st := pool.Status()
	status := ""
	for _, j := range st.Queued {
		if j.RunID == runID {
			status = statusQueued
		}
	}
	for _, id := range st.Active {
		if id == runID {
			status = statusStarting
		}
	}
	if status == "" {
		return ""
	}
	if _, err := x.owner.runner.State(ctx, runID); err == nil {
		return ""
	}
	return status
}

// statusArgs reads RUN and --json from a status command line.
func statusArgs(argv []string) (runID string, asJSON bool) {
	for _, a := range argv[1:] {
		switch {
		case a == "--json" || a == "--json=true" || a == "-json":
			asJSON = true
		case !strings.HasPrefix(a, "-") && runID == "":
			runID = a
		}
	}
	return runID, asJSON
}

// handle registers serve's operations, the whole set its socket answers:
// exec (with status for runs still queued), state, answer, cancel, resume
// and submit. It replaces, not adds to, the set of a run process
// (opsHooks.handleHolder).
func (x *serveExec) handle(mux *control.Mux, pool *serve.Pool) {
	h := x.hooks
	exec := h.execHandler(x.owner)
	mux.Handle(opExec, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a execArgs
		if err := json.Unmarshal(args, &a); err == nil && len(a.Argv) > 0 && a.Argv[0] == "status" {
			id, asJSON := statusArgs(a.Argv)
			if st := x.pending(ctx, pool, id); st != "" {
				var out strings.Builder
				if asJSON {
					_ = writeJSON(&out, RunView{RunID: id, Status: st})
				} else {
					fmt.Fprintf(&out, "run:       %s\nstatus:    %s (submitted to gaffer serve)\n", id, st)
				}
				return execResult{Stdout: out.String()}, nil
			}
		}
		return exec(ctx, args)
	})
	mux.Handle(opState, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a runArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "state: %w", err)
		}
		if st := x.pending(ctx, pool, a.RunID); st != "" {
			return WatchView{RunID: a.RunID, Status: st}, nil
		}
		return watchViewOf(ctx, x.env(), a.RunID)
	})
	mux.Handle(opAnswer, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a answerArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "answer: %w", err)
		}
		e := x.env()
		id, err := e.pick(ctx, a.RunID, "waiting for approval", func(s state.RunStatus) bool { return s == state.RunAwaitingApproval })
		if err != nil {
			return nil, err
		}
		snap, err := e.runner.State(ctx, id)
		if err != nil {
			return nil, e.runError(ctx, id, err)
		}
		if snap.Interrupt == nil || runStatus(snap) != state.RunAwaitingApproval {
			return nil, exitf(ExitPrecondition, "run %s is not waiting for approval (it is %s)", id, runStatus(snap))
		}
		if err := pool.Answer(id, answerOf(a)); err != nil {
			return nil, exitf(ExitLocked, "run %s: %w", id, err)
		}
		verb := "approved"
		if !a.Approved {
			verb = "rejected"
		}
		return answerResult{RunID: id, Message: fmt.Sprintf("Run %s %s; gaffer serve (pid %d) continues it.", id, verb, os.Getpid())}, nil
	})
	mux.Handle(opCancel, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a runArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "cancel: %w", err)
		}
		if a.RunID != "" && pool.Cancel(a.RunID) {
			if _, err := x.owner.runner.State(ctx, a.RunID); err != nil {
				return answerResult{RunID: a.RunID, Message: fmt.Sprintf("Run %s removed from the queue.", a.RunID)}, nil
			}
			for _, id := range pool.Status().Active {
				if id == a.RunID {
					return answerResult{RunID: a.RunID, Message: fmt.Sprintf("Run %s is being cancelled.", a.RunID)}, nil
				}
			}
		}
		var out stringsBuilder
		e := x.env()
		e.io.Out = &out
		if err := Cancel(ctx, e, a.RunID); err != nil {
			return nil, err
		}
		return answerResult{RunID: a.RunID, Message: trimNL(out.String())}, nil
	})
	mux.Handle(opResume, func(ctx context.Context, args json.RawMessage) (any, error) {
		var a runArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, exitf(ExitUsage, "resume: %w", err)
		}
		e := x.env()
		id, err := e.pick(ctx, a.RunID, "to resume", func(s state.RunStatus) bool { return !s.Terminal() })
		if err != nil {
			return nil, err
		}
		snap, err := e.runner.State(ctx, id)
		if err != nil {
			return nil, e.runError(ctx, id, err)
		}
		if st := runStatus(snap); st.Terminal() {
			return nil, exitf(ExitPrecondition, "run %s has already finished: %s", id, st)
		} else if st == state.RunAwaitingApproval {
			return nil, exitf(ExitAwaitingApproval, "run %s is waiting for approval; answer with gaffer approve or reject", id)
		}
		if err := pool.Submit(serve.Job{RunID: id, Kind: serve.JobResume, Key: x.key}); err != nil {
			return nil, exitf(ExitLocked, "resume: %w", err)
		}
		return answerResult{RunID: id, Message: fmt.Sprintf("Run %s queued to resume in gaffer serve (pid %d).", id, os.Getpid())}, nil
	})
	mux.Handle(opSubmit, func(ctx context.Context, args json.RawMessage) (any, error) {
		var o RunOptions
		if err := json.Unmarshal(args, &o); err != nil {
			return nil, exitf(ExitUsage, "submit: %w", err)
		}
		if o.RunID == "" {
			o.RunID = newRunID(time.Now())
		}
		if o.Repo != "" && o.Repo != x.key {
			return nil, exitf(ExitPrecondition, "the gaffer serve holding store %s (pid %d) works in repository %s, not %s; start a serve in %s with a store of its own (gaffer --repo %s serve)",
				x.owner.storeDir, os.Getpid(), x.key, o.Repo, o.Repo, o.Repo)
		}
		if _, err := x.owner.runner.State(ctx, o.RunID); err == nil {
			return nil, exitf(ExitPrecondition, "run %s already exists", o.RunID)
		}
		spec, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("submit: %w", err)
		}
		if err := pool.Submit(serve.Job{RunID: o.RunID, Kind: serve.JobStart, Spec: spec, Key: x.key}); err != nil {
			return nil, exitf(ExitLocked, "submit: %w", err)
		}
		n := len(pool.Status().Queued)
		return answerResult{RunID: o.RunID, Message: fmt.Sprintf("Run %s queued (%d waiting for a worker or for their repository).", o.RunID, n)}, nil
	})
}

// eventLogger logs the runtime's events with run, node and phase
// attributes: nodes starting and finishing at debug, phases, reviews and
// status changes at info, failures at error. A run cut off by its context
// (serve's drain, a cancel) is not a failure: it is logged at info as
// stopped (the message) at its last checkpoint.
func eventLogger(log *slog.Logger, stopped string) func(graph.Event) {
	var mu sync.Mutex
	seqs := map[string]uint64{} // the newest checkpoint of each run
	return func(ev graph.Event) {
		l := log.With("run", ev.RunID)
		cut := ev.Err != nil && (errors.Is(ev.Err, context.Canceled) || errors.Is(ev.Err, context.DeadlineExceeded) ||
			errors.Is(ev.Err, serve.ErrDrained) || errors.Is(ev.Err, serve.ErrCancelled))
		switch ev.Kind {
		case graph.CheckpointSaved:
			mu.Lock()
			seqs[ev.RunID] = max(seqs[ev.RunID], ev.Seq)
			mu.Unlock()
		case graph.NodeStarted:
			l.Debug("node started", "node", ev.Node, "step", ev.Step, "attempt", ev.Attempt)
		case graph.NodeFinished:
			var ie *graph.InterruptError
			switch {
			case errors.As(ev.Err, &ie):
				// Waiting for a human is no failure, and the plan (the
				// interrupt's payload) is for plan show, not the log.
				l.Info("waiting for approval", "node", ev.Node, "step", ev.Step)
			case cut:
				l.Debug("node interrupted", "node", ev.Node, "step", ev.Step, "duration", ev.Duration)
			case ev.Err != nil:
				l.Error("node failed", "node", ev.Node, "step", ev.Step, "duration", ev.Duration, "err", ev.Err)
			default:
				l.Debug("node finished", "node", ev.Node, "step", ev.Step, "duration", ev.Duration)
			}
		case graph.NodeRetry:
			l.Warn("node retry", "node", ev.Node, "attempt", ev.Attempt, "err", ev.Err)
		case graph.RunFinished:
			mu.Lock()
			seq := max(seqs[ev.RunID], ev.Seq)
			delete(seqs, ev.RunID)
			mu.Unlock()
			switch {
			case cut:
				l.Info(stopped, "seq", seq)
			case ev.Err != nil:
				l.Error("run failed", "seq", seq, "err", ev.Err)
			default:
				l.Info("run stopped", "status", fmt.Sprint(ev.Payload), "seq", seq)
			}
		case graph.Custom:
			switch p := ev.Payload.(type) {
			case events.PhaseFinished:
				l.Info("phase finished", "node", ev.Node, "phase", p.Phase, "attempt", p.Attempt, "iteration", p.Iteration,
					"outcome", p.Outcome, "duration", p.Duration)
			case events.Review:
				l.Info("review", "node", ev.Node, "phase", p.Phase, "iteration", p.Iteration, "approved", p.Approved)
			case events.RunStatus:
				l.Info("run status", "from", p.From, "to", p.To)
			}
		}
	}
}

// metricsListenError turns a failed metrics listener into the command's
// exit error: a port in use is a precondition, not a usage error.
func metricsListenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		if a, aerr := metrics.ListenAddr(addr); aerr == nil {
			addr = a
		}
		return exitf(ExitPrecondition, "listen %s: address already in use; pass --%s 127.0.0.1:PORT", addr, metricsAddrFlag)
	}
	return exitf(ExitUsage, "--%s: %w", metricsAddrFlag, err)
}
