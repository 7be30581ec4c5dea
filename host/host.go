package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host/listing"
	"github.com/gaffer-dev/gaffer/internal/procgroup"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Setup is what a host needs from the program around it to start and
// drive runs: how a spec becomes a run ready to start (the program's
// configuration and profiles) and how the agents' drivers are made.
type Setup interface {
	// Prepare checks spec and prepares its run for repo (Start's way: a
	// run queued in serve, a program's), minting its run id when it has
	// none. The work tree is the run's to check (Prepared.Begin), once.
	Prepare(ctx context.Context, repo *workspace.Repo, spec RunSpec) (Prepared, error)
	// Drivers makes the drivers of a run's agents.
	Drivers(env DriverEnv) nodes.DriverFactory
	// CheckKeys refuses a run whose drivers miss a key, before an answer
	// is used up on it.
	CheckKeys(cfg state.RunConfig) error
}

// CommandSetup is a Setup that also runs the Doctor's execute_fix
// commands, as its agents' run_command runs theirs. A Setup without it
// makes runs whose Doctor cannot choose execute_fix.
type CommandSetup interface {
	Commands(env DriverEnv) nodes.CommandRunner
}

// Prepared is a run made ready to start, resolved once and handed down:
// its run id minted, its profile resolved, its plan read and its inputs
// checked (package profile prepares one from a RunSpec: Setup.Preflight
// for the command line, before any store is opened, or Setup.Prepare).
// Launch starts it.
type Prepared interface {
	// Spec is the run's spec, with its run id.
	Spec() RunSpec
	// Begin checks the work tree of repo, the user's checkout (a check
	// made already, before the store opened, is not made again), and
	// builds the run's first state. It returns too the tracked files with
	// uncommitted changes it found, which a run in its own work tree
	// starts without: one status of a large checkout is seconds, so it is
	// read once. The host calls it once, holding the checkout's lock for
	// a run in place.
	Begin(ctx context.Context, repo *workspace.Repo) (state.ExecutionState, []string, error)
	// TakeLock hands over the lock of the checkout a run in place took for
	// its check before the store opened; nil when it holds none. The host
	// keeps it while it drives the run.
	TakeLock() *workspace.WorkTreeLock
}

// DriverEnv is what a host gives Setup.Drivers: the record of agents'
// process groups, where transcripts go, and a warning logger.
type DriverEnv struct {
	Groups      *procgroup.Registry
	Transcripts string // the directory of the runs' transcripts
	Warn        func(msg string)
}

// Front is the person a local host works for, while it drives a run.
type Front interface {
	// Say tells one line of what the host does (a run started, resumed).
	Say(line string)
	// Notice tells one line about what the host found and fixed (git
	// locks a killed process left, work kept aside).
	Notice(line string)
	// Watch shows runID's progress while the host drives it; the host
	// calls the returned function with the outcome before it returns.
	Watch(runID string) (end func(Outcome))
	// Asks reports whether Ask can ask a person; without one, a run that
	// waits for its plan's approval is parked.
	Asks() bool
	// Ask asks the person to approve the plan of s. An answer on remote
	// (from another terminal, through the socket) ends the question.
	Ask(ctx context.Context, req nodes.ApprovalRequest, s state.ExecutionState, remote <-chan nodes.Answer) (nodes.Answer, error)
}

// Quiet is the Front of a host that nobody watches (serve's runs):
// nothing is said or shown, and nobody is asked.
type Quiet struct{}

// Say discards line.
func (Quiet) Say(string) {}

// Notice discards line.
func (Quiet) Notice(string) {}

// Watch shows nothing.
func (Quiet) Watch(string) (end func(Outcome)) { return func(Outcome) {} }

// Asks is false: nobody is asked.
func (Quiet) Asks() bool { return false }

// Ask is never called (Asks is false).
func (Quiet) Ask(context.Context, nodes.ApprovalRequest, state.ExecutionState, <-chan nodes.Answer) (nodes.Answer, error) {
	return nodes.Answer{}, errors.New("host: nobody to ask")
}

// Config makes a Host (New).
type Config struct {
	// Dir is the store's local directory: the socket, agents' process
	// groups, transcripts, the serve journal and the runs' work trees are
	// kept beside it (Dir.sock, Dir.groups, Dir.logs, Dir.serve.json,
	// Dir.worktrees). A store directory is its own; for a database store
	// the cli uses the repository's .git/gaffer.
	Dir   string
	Setup Setup
	Front Front // nil: Quiet
	// Logger logs the runtime's warnings; nil discards them.
	Logger *slog.Logger
	// Cmd formats a gaffer command line for the messages that name the
	// fix ("gaffer resume r-1"); nil: "gaffer" and args.
	Cmd func(args ...string) string
	// WrapStore, when set, wraps the store the runner writes to (the
	// metrics time checkpoint writes).
	WrapStore func(checkpoint.Store) checkpoint.Store
	// ReproducibleDates dates each commit one second after its parent.
	ReproducibleDates bool
	// AfterCommit, AfterPublish and AfterRestore are the kill tests'
	// pauses (nodes.Config).
	AfterCommit  func(subject string)
	AfterPublish func(commit string)
	AfterRestore func()
	// MaxSessions caps the agent sessions the host's runs run at once,
	// lanes and runs together (serve --max-sessions); 0: no cap.
	MaxSessions int
	// TraceContent puts the model calls' prompts and completions,
	// redacted, in their events for telemetry (nodes.Config.TraceContent;
	// telemetry.content).
	TraceContent bool
	// Shared is a database store opened without the local directory's
	// lock, beside the serve that may hold it on this host: for a command
	// that reads the runs, or hands its work to the serves through the
	// database (a client pool.Pool's queue, not started). It ends nothing a killed
	// process left (git locks, agents' process groups): that is the
	// holder's work. Only a database store is shared (package hoststore).
	Shared bool
	// Remote, on a database store, is the shared remote (a URL or a path)
	// the runs' branches are pushed to, so that any host may take a run
	// over (remote.go): each host keeps a mirror of it and each run its
	// own clone. "" pushes nothing, as a store directory never does
	// (package hoststore leaves it out there); with Shared (a command
	// opened beside the serves) only fork uses it, to push the fork's
	// branch.
	Remote string
}

// Host owns a store and the runner on it: the runs it drives, the one it
// holds for other processes, and the work tree's lock. Open one per
// process and store; Close it.
type Host struct {
	cfg        Config
	front      Front
	repo       *workspace.Repo
	dir        string
	store      checkpoint.Store
	closeStore func() error
	runner     *graph.Runner[state.ExecutionState]
	log        *slog.Logger

	repos  *nodes.Repos       // each run's repository: its own work tree, or repo
	remote *workspace.Mirror  // the shared remote the runs' branches are pushed to; nil for none
	trees  workspace.RunTrees // the runs' own work trees (or clones of remote)

	live liveSet  // runs this process is driving now
	held heldRuns // the runs driven for other processes' answers and cancels

	mu       sync.Mutex
	wt       map[string]*workspace.WorkTreeLock // work tree root → its lock, held while a run is driven there
	starting map[string]bool                    // runs Start has taken that have no checkpoint yet
	closers  []func()
	// linkTrace is told the trace context a run was submitted with
	// (OnTraceLink); nil when this process does not trace.
	linkTrace func(runID, traceparent, tracestate string) error
}

// New makes the Host of cfg on repo and store, an open store (package
// hoststore opens the one a configuration names) that Close closes with
// closeStore: it ends what a killed gaffer process left behind (git lock
// files, agents' process groups) and compiles the workflow. The store is
// closed when New fails.
func New(cfg Config, repo *workspace.Repo, store checkpoint.Store, closeStore func() error) (*Host, error) {
	if cfg.Front == nil {
		cfg.Front = Quiet{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Cmd == nil {
		cfg.Cmd = func(args ...string) string { return strings.Join(append([]string{"gaffer"}, args...), " ") }
	}
	dir := cfg.Dir
	h := &Host{cfg: cfg, front: cfg.Front, repo: repo, repos: nodes.NewRepos(repo), dir: dir, store: store, closeStore: closeStore, log: cfg.Logger,
		wt: map[string]*workspace.WorkTreeLock{}, remote: newRemote(cfg, dir)}
	h.trees = runTrees(repo, dir, h.remote)
	shared := cfg.Shared
	groups, err := h.endLeftovers(shared)
	if err != nil {
		closeStore()
		return nil, err
	}
	var warnOnce sync.Once
	denv := DriverEnv{Groups: groups, Transcripts: TranscriptDir(dir), Warn: func(msg string) {
		warnOnce.Do(func() { h.log.Warn(msg) })
	}}
	drivers := cfg.Setup.Drivers(denv)
	nc := nodes.Config{Repo: repo, RepoFor: h.repoFor, Drivers: drivers, Clock: time.Now, Logger: h.log,
		ReproducibleDates: cfg.ReproducibleDates, AfterCommit: cfg.AfterCommit, AfterPublish: cfg.AfterPublish, AfterRestore: cfg.AfterRestore,
		MaxSessions: cfg.MaxSessions, TraceContent: cfg.TraceContent,
		Notice: func(msg string) { h.front.Notice("gaffer: " + msg) }}
	if cs, ok := cfg.Setup.(CommandSetup); ok {
		nc.Commands = cs.Commands(denv)
	}
	if h.remote != nil {
		nc.Publish = h.publish
	}
	gr, err := nodes.Build(nc)
	if err != nil {
		closeStore()
		return nil, err
	}
	var s checkpoint.Store = store
	if cfg.WrapStore != nil {
		s = cfg.WrapStore(s)
	}
	h.runner, err = gr.Compile(graph.WithStore(s), graph.WithDurability(graph.Sync), graph.WithCodec(nodes.NewCodec()),
		graph.WithMerge(nodes.Merge), graph.WithSummary(listing.Summarize))
	if err != nil {
		closeStore()
		return nil, err
	}
	h.closers = append(h.closers, h.live.track(h.runner)) // Status tells a stopped run
	if !shared {
		h.sweepWorkTrees(context.Background())
	}
	return h, nil
}

// Close stops what the host started and closes the store.
//
// It returns the store's error when that names a loss the user must
// know: a store deleted while it was open (checkpoint.ErrDeleted); other
// errors of a closing store are the store's to recover from at its next
// open (a full disk leaves its logs to replay), and are not returned.
func (h *Host) Close() error {
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	h.closers = nil
	err := h.closeStore()
	if errors.Is(err, checkpoint.ErrDeleted) {
		return err
	}
	return nil
}

// OnClose adds f to what Close runs (before the store closes).
func (h *Host) OnClose(f func()) { h.closers = append(h.closers, f) }

// OnTraceLink sets f to be told, before a run starts or resumes, the W3C
// trace context (traceparent, tracestate) of the span that submitted it
// to serve: package hoststore sets telemetry.Tracer.Link when this
// process traces. Call it before the host drives any run.
func (h *Host) OnTraceLink(f func(runID, traceparent, tracestate string) error) { h.linkTrace = f }

// LinkTrace tells the tracer the trace context run runID was submitted
// with, for its trace to link to; it does nothing when the process does
// not trace or traceparent is empty. An error says the context was
// malformed and is ignored: the run goes on, unlinked.
func (h *Host) LinkTrace(runID, traceparent, tracestate string) error {
	if h.linkTrace == nil || traceparent == "" {
		return nil
	}
	return h.linkTrace(runID, traceparent, tracestate)
}

// Logger is the host's logger (Config.Logger).
func (h *Host) Logger() *slog.Logger { return h.log }

// Store is the store the host works on.
func (h *Host) Store() checkpoint.Store { return h.store }

// Repo is the host's repository.
func (h *Host) Repo() *workspace.Repo { return h.repo }

// StoreDir is the host's store directory.
func (h *Host) StoreDir() string { return h.dir }

// Subscribe calls f with every event of the host's runner until the
// returned function is called (graph.Runner.Subscribe).
func (h *Host) Subscribe(f func(graph.Event)) (unsubscribe func()) { return h.runner.Subscribe(f) }

// State is a run's latest checkpoint (the newest run's for an empty
// RunID); a run the store does not have, or that another process holds,
// is refused (*Error) in a line naming the fix.
func (h *Host) State(ctx context.Context, req RunRequest) (graph.Snapshot[state.ExecutionState], error) {
	_, snap, err := h.latest(ctx, req.RunID)
	return snap, err
}

// Delete removes a run's checkpoints and transcripts from the store; a
// run this process is driving is refused (Held).
func (h *Host) Delete(ctx context.Context, req RunRequest) error {
	runID := req.RunID
	if err := CheckRunID(runID); err != nil {
		return errorf(Usage, "%w", err)
	}
	if h.live.driving(runID) {
		return errorf(Held, "run %s is being driven by %s; cancel it first", runID, holderName())
	}
	if err := h.store.Delete(ctx, runID); err != nil {
		return fmt.Errorf("delete run %s: %w", runID, err)
	}
	_ = os.RemoveAll(filepath.Join(TranscriptDir(h.dir), runID))
	return nil
}

// endLeftovers ends what a killed gaffer process left, before anything
// else happens, and returns the record of the agents' process groups.
// With the store's lock held no other gaffer process works on this
// repository's runs: the git locks a killed one left can go, and the
// agents' process groups it left running are ended (the temporary
// directories they worked in are hoststore.Open's to sweep). A shared host
// holds no lock: what was left is the holder's to end.
func (h *Host) endLeftovers(shared bool) (*procgroup.Registry, error) {
	if removed, err := recoverGitLocks(h.repo.Root(), shared); err != nil {
		return nil, err
	} else if len(removed) > 0 {
		h.front.Notice(fmt.Sprintf("gaffer: removed git lock files left by a killed gaffer process: %s", strings.Join(removed, ", ")))
	}
	groups := procgroup.Open(h.dir + ".groups")
	if killed, err := killOrphans(groups, shared); err != nil {
		return nil, fmt.Errorf("end the agents a killed gaffer process left running: %w", err)
	} else if len(killed) > 0 {
		h.front.Notice(fmt.Sprintf("gaffer: killed agent process groups left running by a killed gaffer process: %v", killed))
	}
	return groups, nil
}

// recoverGitLocks is nodes.RecoverGitLocks, except for a shared host.
func recoverGitLocks(root string, shared bool) ([]string, error) {
	if shared {
		return nil, nil
	}
	return nodes.RecoverGitLocks(root)
}

// killOrphans is groups.KillOrphans, except for a shared host.
func killOrphans(groups *procgroup.Registry, shared bool) ([]int, error) {
	if shared {
		return nil, nil
	}
	return groups.KillOrphans()
}

// ViewStatus is the status a person is told of a run's checkpoint:
// awaiting_approval while the run waits on an interrupt, the state's
// status otherwise.
func ViewStatus(snap graph.Snapshot[state.ExecutionState]) state.RunStatus {
	if snap.Interrupt != nil && !snap.State.Status.Terminal() {
		return state.RunAwaitingApproval
	}
	return snap.State.Status
}

// Pick returns arg, or the id of the newest run whose status (ViewStatus)
// fits; without one, the refusal names what (a run "to resume").
func (h *Host) Pick(ctx context.Context, arg, what string, fits func(state.RunStatus) bool) (string, error) {
	if arg != "" {
		return arg, nil
	}
	es, err := h.entries(ctx, false)
	if err != nil {
		return "", err
	}
	for i := range es {
		if st, _ := es[i].view(); fits(st) {
			return es[i].RunID, nil
		}
	}
	if len(es) == 0 {
		return "", h.noRuns()
	}
	return "", errorf(Refused, "%w: no run %s in %s", ErrNoRun, what, h.dir)
}

// noRuns is the refusal of a request for the newest run of a kind in a
// store without runs, told as the command line tells a repository
// without a store: a run killed before its first checkpoint left none,
// and is started again.
func (h *Host) noRuns() error {
	return &Error{Code: Refused, Err: noRunError("no runs in this repository (the store at " + h.dir + " has none)")}
}

// noRunError is ErrNoRun told in a sentence of its own.
type noRunError string

func (e noRunError) Error() string { return string(e) }

// Is makes errors.Is(e, ErrNoRun) true.
func (e noRunError) Is(target error) bool { return target == ErrNoRun }

// latest picks run arg (the newest run of any status without it) and
// reads its latest checkpoint.
func (h *Host) latest(ctx context.Context, arg string) (string, graph.Snapshot[state.ExecutionState], error) {
	id, err := h.Pick(ctx, arg, "at all", func(state.RunStatus) bool { return true })
	if err != nil {
		return "", graph.Snapshot[state.ExecutionState]{}, err
	}
	snap, err := h.runner.State(ctx, id)
	if err != nil {
		return "", snap, h.refusal(ctx, id, err)
	}
	return id, snap, nil
}

// unfinished picks a run that has not finished (the newest when arg is
// "") and returns its latest snapshot; what says what it is picked for.
// With stash, a finished run whose user's changes are still to be put
// back fits too (resume).
func (h *Host) unfinished(ctx context.Context, arg, what string, stash bool) (string, graph.Snapshot[state.ExecutionState], error) {
	var zero graph.Snapshot[state.ExecutionState]
	fits := func(snap graph.Snapshot[state.ExecutionState]) bool {
		return !snap.State.Status.Terminal() || (stash && snap.State.Stash.Pending())
	}
	id := arg
	if id == "" {
		es, err := h.entries(ctx, false)
		if err != nil {
			return "", zero, err
		}
		for i := range es {
			if st, stashed := es[i].view(); !st.Terminal() || (stash && stashed) {
				id = es[i].RunID
				break
			}
		}
		if len(es) == 0 {
			return "", zero, h.noRuns()
		}
		if id == "" {
			return "", zero, errorf(Refused, "%w: no run %s in %s", ErrNoRun, what, h.dir)
		}
	}
	snap, err := h.runner.State(ctx, id)
	if err != nil {
		return "", zero, h.refusal(ctx, id, err)
	}
	if !fits(snap) {
		return "", zero, errorf(Refused, "run %s has already finished: %s", id, snap.State.Status)
	}
	if err := h.checkCommits(ctx, snap); err != nil {
		return "", zero, err
	}
	return id, snap, nil
}

// checkCommits refuses a run whose store lost checkpoints that its
// commits in the branch prove existed (nodes.CheckCommits): going on from
// the older checkpoint would redo phases silently.
func (h *Host) checkCommits(ctx context.Context, snap graph.Snapshot[state.ExecutionState]) error {
	s := snap.State
	var err error
	if dir := s.Run.WorkTree; dir != "" && !exists(dir) {
		// The run's work tree is gone (the run ended): its branch holds
		// its commits, not the user's checkout.
		err = nodes.CheckBranchCommits(ctx, h.repo, ForkBranchPrefix+s.Run.ID, s)
	} else {
		err = nodes.CheckCommits(ctx, h.repoOf(s), s)
	}
	if err != nil {
		return &Error{Code: Refused, Err: err}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// refusal turns an error of the runtime about runID into a one-line
// *Error naming the fix, when it is one (refused); err otherwise.
func (h *Host) refusal(ctx context.Context, runID string, err error) error {
	if r := h.refused(runID, err); r != nil {
		return r
	}
	return err
}

// refused is the *Error an error of the runtime about runID stands for,
// nil for an error that is no refusal (the run stopped).
func (h *Host) refused(runID string, err error) error {
	var held *checkpoint.LeaseHeldError
	switch {
	case errors.As(err, &held):
		return errorf(Held, "run %s is held by pid %d on host %s", runID, held.Holder.PID, held.Holder.Host)
	case errors.Is(err, graph.ErrRunDone):
		return errorf(Refused, "run %s has already finished (see %s)", runID, h.cfg.Cmd("status", runID))
	case errors.Is(err, graph.ErrRunNotFound):
		return errorf(Refused, "no run %s in %s", runID, h.dir)
	case errors.Is(err, graph.ErrNotInterrupted):
		return errorf(Refused, "run %s is not waiting for approval (see %s)", runID, h.cfg.Cmd("status", runID))
	case errors.Is(err, agent.ErrMissingKey), errors.Is(err, agent.ErrAuth):
		return errorf(Refused, "run %s stopped: %w (fix it, then: %s)", runID, lastCause(err), h.cfg.Cmd("resume", runID))
	case errors.Is(err, nodes.ErrHeadMoved):
		var moved *nodes.HeadMovedError
		if errors.As(err, &moved) {
			err = moved
		}
		return errorf(Refused, "run %s stopped, nothing changed: %w; then: %s", runID, err, h.cfg.Cmd("resume", runID))
	case errors.Is(err, nodes.ErrOutsideEdits):
		var edits *nodes.OutsideEditsError
		if errors.As(err, &edits) {
			err = edits
		}
		return errorf(Refused, "run %s stopped, nothing committed: %w: %s (or %s)", runID, err, h.cfg.Cmd("resume", runID), h.cfg.Cmd("cancel", runID))
	case errors.Is(err, nodes.ErrGitSettings):
		var changed *nodes.GitSettingsError
		if errors.As(err, &changed) {
			err = changed
		}
		return errorf(Refused, "run %s stopped, nothing committed: %w: %s (or %s)", runID, err, h.cfg.Cmd("resume", runID), h.cfg.Cmd("cancel", runID))
	}
	return nil
}

// lastCause returns the innermost agent error of err (ErrAuth or
// ErrMissingKey with its message naming the variable), or err.
func lastCause(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "agent: ") {
			return e
		}
	}
	return err
}

// lockWorkTree takes the lock of repo's work tree (workspace.LockWorkTree)
// for running runID's phases here, unless the host holds it already, and
// returns what releases it. Another process holding it is Held, naming
// its pid, host and run; so is this host executing another run there.
// The lock is independent of the store: two processes with different
// stores never work on one tree at once. It dies with the process. Each
// work tree has its own lock: the user's checkout for runs in place, and
// each run's own work tree.
func (h *Host) lockWorkTree(repo *workspace.Repo, runID string) (func(), error) {
	return h.adoptWorkTree(repo, runID, nil)
}

// adoptWorkTree is lockWorkTree with the lock taken already when taken is
// not nil (a prepared run's, Prepared.TakeLock).
func (h *Host) adoptWorkTree(repo *workspace.Repo, runID string, taken *workspace.WorkTreeLock) (func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var held *workspace.WorkTreeHeldError
	root := repo.Root()
	if l := h.wt[root]; l != nil {
		if taken != nil {
			taken.Unlock() // not to be had while this host holds the tree: a caller's mistake
		}
		if hd := l.Holder(); hd.Run != runID { // this process executes another run there
			return nil, errorf(Held, "work tree %s is in use by %s; wait for it to finish or stop it", root, hd)
		}
		return func() {}, nil
	}
	l := taken
	if l == nil {
		var err error
		l, err = repo.LockWorkTree(runID)
		if errors.As(err, &held) {
			return nil, errorf(Held, "work tree %s is in use by %s; wait for it to finish or stop it", held.Root, held.Holder)
		}
		if err != nil {
			return nil, fmt.Errorf("lock the work tree: %w", err)
		}
	}
	h.wt[root] = l
	return func() {
		h.mu.Lock()
		delete(h.wt, root)
		h.mu.Unlock()
		l.Unlock()
	}, nil
}

// TranscriptDir is where the transcripts of the runs of the store at
// storeDir are kept: beside it.
func TranscriptDir(storeDir string) string { return storeDir + ".logs" }

// TranscriptEnd is the file in a run's transcript directory that says the
// run ended (`logs --follow` stops).
const TranscriptEnd = "end"

// markTranscriptEnd records that run id ended.
func markTranscriptEnd(storeDir, id string) {
	dir := filepath.Join(TranscriptDir(storeDir), id)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, TranscriptEnd), nil, 0o600)
}
