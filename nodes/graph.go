package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// The workflow's node names.
const (
	NodeArchitect = "architect"
	NodeValidator = "validator"
	NodeApproval  = "approval"
	NodePhase     = "phased_execution"
	NodeReview    = "review"
	NodeNextTask  = "next_task"
	NodeRestore   = "restore_user_changes"
)

// DriverFactory returns the driver of an agent role for a run started with
// cfg. It may return a nil driver for agent.RoleEvaluator: the workflow then
// sorts review items itself. The CLI keeps the one factory; the llm and cli
// drivers plug in there.
type DriverFactory func(role agent.Role, cfg state.RunConfig) (agent.Driver, error)

// Config is what the nodes need from the outside world. Validate fills in
// defaults.
type Config struct {
	Repo *workspace.Repo // the repository the runs work on: the user's checkout
	// RepoFor, when set, is the repository run s works in: its own work
	// tree (state.RunInfo.WorkTree), or Repo for a run in place (see
	// Repos.For). Unset, every run works in Repo.
	RepoFor func(s state.ExecutionState) (*workspace.Repo, error)
	Drivers DriverFactory    // role → driver
	Clock   func() time.Time // for StartedAt/CompletedAt, durations and commit dates; default time.Now
	// ReproducibleDates dates each commit one second after its parent
	// instead of Clock's time, so the same work on the same repository
	// makes byte-identical commits (goldens, tests). Off by default: a
	// user's history shows when the work was done.
	ReproducibleDates bool
	Logger            *slog.Logger // review items that are deferred or rejected; default discards
	// OnMessage, when set, receives every agent session's messages (the
	// terminal's view of what the agent does), one at a time, also from
	// a phase's lanes that run at once.
	OnMessage func(role agent.Role, m agent.Message)
	// AfterCommit, when set, is called after each commit this package
	// makes (not after one it adopts) — a lane's too, once its ref is
	// set — before the step's checkpoint (a lane's pending write): the
	// kill test pauses there to SIGKILL a run between a commit and its
	// checkpoint.
	AfterCommit func(subject string)
	// MaxSessions caps the agent sessions this workflow runs at once,
	// across all its runs and their lanes (serve --max-sessions); a
	// session waits for a place. 0: no cap but each run's parallel.
	MaxSessions int
	// Publish, when set, makes each commit of a run durable before the
	// checkpoint that records it: it pushes commit to the run's branch on
	// a shared remote if the branch there is at old (compare-and-swap,
	// git push --force-with-lease), and succeeds when the branch already
	// is at commit (a push retried after a crash). A branch anywhere else
	// is a *RemoteMovedError: another host moved it, and this attempt
	// stops without overwriting it. With Publish set the commits also
	// carry the run's lease token (TrailerLease). Unset, nothing is pushed
	// (a run on one host).
	Publish func(ctx context.Context, s state.ExecutionState, commit, old string) error
	// AfterPublish, when set, is called after each push of Publish,
	// before the step's checkpoint: a test SIGKILLs a run there, between
	// a pushed commit and the checkpoint that records it.
	AfterPublish func(commit string)
	// AfterRestore, when set, is called once restore_user_changes has put
	// the user's changes back, before it drops the stash's ref and before
	// its checkpoint: a test SIGKILLs a run there.
	AfterRestore func()
	// Notice, when set, tells the user something they must know, in one
	// line (the CLI prints it); by default it goes to Logger as a warning.
	Notice func(msg string)
	// Commands, when set, runs the Doctor's execute_fix command of run
	// cfg in dir, confined and with the environment an agent's
	// run_command has (no API keys), its output cut to a bound and its
	// secrets redacted. Unset, the Doctor cannot choose execute_fix.
	Commands CommandRunner
	// TraceContent puts each model call's prompt and completion in its
	// model_call event (events.ModelCall.InputMessages), redacted by the
	// session's driver (a driver with a Redact(string) string method, as
	// the transcripts' is; a session whose driver has none keeps no
	// content). Off, the events carry none (telemetry.content: false).
	TraceContent bool
}

// CommandRunner runs command with "sh -c" in dir for a run of cfg, as an
// agent's run_command runs (package profile makes it): a non-zero exit
// is in the result, the error is for a command that could not start or
// a ctx that ended.
type CommandRunner func(ctx context.Context, cfg state.RunConfig, dir, command string) (agent.CommandResult, error)

func (c Config) validate() (Config, error) {
	if c.Repo == nil {
		return c, fmt.Errorf("%w: no repository", ErrInvalidConfig)
	}
	if c.Drivers == nil {
		return c, fmt.Errorf("%w: no driver factory", ErrInvalidConfig)
	}
	if c.MaxSessions < 0 {
		return c, fmt.Errorf("%w: max sessions %d", ErrInvalidConfig, c.MaxSessions)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Notice == nil {
		logger := c.Logger
		c.Notice = func(msg string) { logger.Warn(msg) }
	}
	return c, nil
}

// workflow carries the validated Config to the nodes.
type workflow struct {
	cfg Config
	// ran maps a run id to the phase index of the last developer session
	// this process ran for it: a reset after such a session only undoes
	// that session's work, while any other reset may meet changes it
	// cannot account for, which it keeps first (see rescue).
	ran sync.Map
	// reserved maps a run id to the recovery call this process reserved
	// and has not made yet; a pending call missing here was cut off by a
	// crash (see recover).
	reserved sync.Map
	// fixes maps a run id to the decision number of the Doctor's fix
	// (execute_fix) this process granted and has not run yet; a pending
	// fix missing here was cut off by a crash, and is not run (fix.go).
	fixes sync.Map
	// gates maps a run id to its lanes' places (a channel of
	// RunConfig.Parallel): a lane holds one while it runs.
	gates sync.Map
	// spends maps a phase attempt (laneSpendKey) to what its lanes spent
	// and reserve in this process (laneBudget).
	spends sync.Map
	// notes maps a run id to what this process last verified of its
	// tree (notes.go).
	notes sync.Map
	// seats holds a place per agent session running, Config.MaxSessions
	// of them; nil without a cap.
	seats chan struct{}
	// msgMu makes the sessions' messages reach Config.OnMessage one at
	// a time; hookMu the lanes' commits Config.AfterCommit.
	msgMu, hookMu sync.Mutex
}

// Build wires the workflow's nodes and routers into a graph:
//
//	START ─► architect ─► validator ─┬─► approval ─┬─► phased_execution ─► review ─┬─► next_task ─► phased_execution
//	  │  (plan given)        ▲        │  (interrupt) │                              ├─► phased_execution (retry)
//	  └──────────────────────┘        └─► architect  └─► architect (replan) / END  └─► END (done, or halted)
//
// Every edge is conditional: a state whose Status is terminal goes to END
// from anywhere, which is how `cancel` stops a run (UpdateState).
//
// Compile the graph with graph.WithCodec(NewCodec()), so that a step
// writes only the phase states it changed, and graph.WithMerge(Merge),
// which puts a phase's lanes (graph.Send branches) into the run's state.
func Build(cfg Config) (*graph.Graph[state.ExecutionState], error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	w := &workflow{cfg: cfg}
	if cfg.MaxSessions > 0 {
		w.seats = make(chan struct{}, cfg.MaxSessions)
	}
	g := graph.New[state.ExecutionState]()
	g.AddNode(NodeArchitect, w.architect)
	g.AddNode(NodeValidator, w.validator)
	g.AddNode(NodeApproval, w.approval)
	g.AddNode(NodePhase, w.phase)
	g.AddNode(NodeReview, w.review)
	g.AddNode(NodeNextTask, w.nextTask)
	g.AddNode(NodeRestore, w.restore)
	g.AddNode(NodeRecover, w.recover)
	g.AddNode(NodeLane, w.lane)
	g.AddNode(NodeCombine, w.combine)
	g.AddConditionalEdge(graph.START, router(RouteStart), NodeArchitect, NodeValidator, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeArchitect, router(RouteAfterArchitect), NodeValidator, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeValidator, router(RouteAfterValidator), NodeApproval, NodeArchitect, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeApproval, router(RouteAfterApproval), NodePhase, NodeArchitect, NodeRestore, graph.END)
	g.AddSendEdge(NodePhase, RouteAfterPhaseSends, NodeReview, NodeRecover, NodeRestore, graph.END, NodeLane, NodeCombine)
	g.AddConditionalEdge(NodeLane, router(RouteAfterLanes), NodeCombine, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeCombine, router(RouteAfterCombine), NodeReview, NodePhase, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeReview, router(RouteAfterReview), NodeNextTask, NodePhase, NodeRecover, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeRecover, router(RouteAfterRecover), NodeRecover, NodePhase, NodeNextTask, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeNextTask, router(RouteAfterNextTask), NodePhase, NodeRestore, graph.END)
	g.AddConditionalEdge(NodeRestore, router(RouteAfterRestore), graph.END)
	return g, nil
}

// router adapts a pure routing function to graph.Router.
func router(f func(state.ExecutionState) string) graph.Router[state.ExecutionState] {
	return func(_ context.Context, s state.ExecutionState) ([]string, error) {
		return []string{f(s)}, nil
	}
}

// driver returns the driver of role, or ErrNoDriver.
func (w *workflow) driver(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
	d, err := w.cfg.Drivers(role, cfg)
	if err != nil {
		return nil, fmt.Errorf("nodes: %s driver: %w", role, err)
	}
	if d == nil && role != agent.RoleEvaluator {
		return nil, fmt.Errorf("%w %s", ErrNoDriver, role)
	}
	return d, nil
}

// session runs one agent session; the caller adds its usage to the state
// (usage), emitting the agent_usage event.
func (w *workflow) session(ctx context.Context, d agent.Driver, s agent.Session) (agent.Report, error) {
	release, err := w.seat(ctx)
	if err != nil {
		return agent.Report{}, err
	}
	defer release()
	w.notes.Delete(s.RunID) // an agent may change the tree
	d, s = w.withMessages(ctx, d, s)
	rep, err := d.Run(ctx, s)
	if err != nil {
		return rep, fmt.Errorf("nodes: %s: %w", sessionLabel(s), err)
	}
	return rep, nil
}

// seat waits for a place among Config.MaxSessions agent sessions and
// returns its release; at once without a cap.
func (w *workflow) seat(ctx context.Context) (func(), error) {
	if w.seats == nil {
		return func() {}, nil
	}
	select {
	case w.seats <- struct{}{}:
		return func() { <-w.seats }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// withMessages returns s sending its messages to Config.OnMessage, one
// at a time: a phase's lanes run their sessions at once, and
// Config.OnMessage is called as a session's own callback is, never
// concurrently. Its model and tool calls are emitted too (withCalls),
// through the driver returned (d, or d keeping the prompts it is given).
func (w *workflow) withMessages(ctx context.Context, d agent.Driver, s agent.Session) (agent.Driver, agent.Session) {
	if w.cfg.OnMessage != nil {
		role := s.Role
		s.OnMessage = func(m agent.Message) {
			w.msgMu.Lock()
			defer w.msgMu.Unlock()
			w.cfg.OnMessage(role, m)
		}
	}
	return w.withCalls(ctx, d, s)
}

// structured runs a session whose answer is JSON through
// agent.RunStructured: an answer that does not parse is asked for once
// more, with the parse error, in the same conversation; a second one that
// does not parse is an error matching agent.ErrBadOutput, with the report
// (and its usage) of both runs.
func structured[T any](ctx context.Context, w *workflow, d agent.Driver, s agent.Session, parse func(string) (T, error)) (T, agent.Report, error) {
	w.notes.Delete(s.RunID) // an agent may change the tree
	release, err := w.seat(ctx)
	if err != nil {
		var zero T
		return zero, agent.Report{}, err
	}
	defer release()
	d, s = w.withMessages(ctx, d, s)
	v, rep, err := agent.RunStructured(ctx, d, s, parse)
	if err != nil && !errors.Is(err, agent.ErrBadOutput) {
		return v, rep, fmt.Errorf("nodes: %s: %w", sessionLabel(s), err)
	}
	return v, rep, err
}

// sessionLabel names a session in errors: "architect session (revision
// 0)", "developer session (phase 2, attempt 1, iteration 3)".
func sessionLabel(s agent.Session) string {
	if s.Role == agent.RoleArchitect {
		return fmt.Sprintf("architect session (revision %d)", s.Revision)
	}
	if s.Iteration > 0 {
		return fmt.Sprintf("%s session (phase %d, attempt %d, iteration %d)", s.Role, s.Phase, s.Attempt, s.Iteration)
	}
	return fmt.Sprintf("%s session (phase %d, attempt %d)", s.Role, s.Phase, s.Attempt)
}
