package host

import (
	"context"
	"errors"
	"fmt"
	"github.com/gaffer-dev/gaffer/agent"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// Service is what every front end works through: the command line, the
// socket's other side, a web page. A *Host implements it in the process
// that holds the store; a *Client implements it over the control socket,
// reaching the process that holds it; serve's Pool queues the runs it is
// asked to start. A caller does not know which one it has.
//
// Operations return domain outcomes (a run completed, parked for a human,
// halted, handed to the process that drives it, …) and *Error for what
// they refuse; never exit codes.
type Service interface {
	// Start starts a new run from spec and drives it here, or queues it.
	Start(ctx context.Context, spec RunSpec) (Outcome, error)
	// Resume continues a run from its latest checkpoint (the newest
	// unfinished run for an empty RunID).
	Resume(ctx context.Context, req RunRequest) (Outcome, error)
	// Answer approves or rejects a run's plan, or answers recovery's
	// question (Decision set), and continues the run.
	Answer(ctx context.Context, req AnswerRequest) (Outcome, error)
	// Cancel ends an unfinished run for good.
	Cancel(ctx context.Context, req RunRequest) (Outcome, error)
	// Status is one run's latest checkpoint (the newest run for an empty
	// RunID) with what the host knows beside it.
	Status(ctx context.Context, req RunRequest) (RunStatus, error)
	// List is every run of the store, newest first.
	List(ctx context.Context) ([]RunStatus, error)
	// History is a run's checkpoints, newest first.
	History(ctx context.Context, req RunRequest) ([]Checkpoint, error)
	// Fork copies a checkpoint of a run into a new run on its own branch.
	Fork(ctx context.Context, req ForkRequest) (Forked, error)
	// Submit queues a new run in the process that executes runs (serve).
	Submit(ctx context.Context, spec RunSpec) (Outcome, error)
}

// RunSpec is a run to start: what `gaffer run` and `submit` are given, and
// what serve's journal keeps for a run not started yet. File paths are
// absolute when the spec crosses a process.
type RunSpec struct {
	RunID       string        `json:"run_id,omitempty"` // "" makes one
	PlanFile    string        `json:"plan_file,omitempty"`
	Goal        string        `json:"goal,omitempty"`
	Driver      string        `json:"driver,omitempty"`  // every role's driver; "" takes the profile's
	Model       string        `json:"model,omitempty"`   // every role's model; "" takes the profile's
	Profile     string        `json:"profile,omitempty"` // "" for the configuration's default
	Script      string        `json:"script,omitempty"`
	AutoApprove bool          `json:"auto_approve,omitempty"`
	AllowDirty  bool          `json:"allow_dirty,omitempty"`
	Pace        time.Duration `json:"pace,omitempty"`
	TrackerID   string        `json:"tracker_id,omitempty"`
	// Repo is the submitter's work tree (absolute, symlinks resolved),
	// which serve checks is its own.
	Repo string `json:"repo,omitempty"`
	// InPlace runs in the user's checkout (gaffer run --in-place) instead
	// of the run's own work tree on its own branch.
	InPlace bool `json:"in_place,omitempty"`
	// Plan is the plan file's content when the front end has read it
	// already (a pipe reads once); it does not cross a process.
	Plan []byte `json:"-"`
}

// RunRequest names a run; "" picks the newest run that fits the operation.
type RunRequest struct {
	RunID string `json:"run_id,omitempty"`
}

// AnswerRequest is a human's answer to what a run waits for.
type AnswerRequest struct {
	RunID    string `json:"run_id,omitempty"`
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
	// Decision answers recovery's question instead of the plan's approval:
	// "retry" (another attempt, Feedback its guidance) or "stop".
	Decision string `json:"decision,omitempty"`
}

// Answer is the graph's resume value for req.
func (r AnswerRequest) answer() nodes.Answer {
	return nodes.Answer{Approved: r.Approved, Feedback: r.Feedback}
}

// ForkRequest names the checkpoint to fork.
type ForkRequest struct {
	RunID string `json:"run_id"`
	Seq   uint64 `json:"seq"`
}

// Forked is a fork's new run.
type Forked struct {
	RunID  string `json:"run_id"` // the new run
	From   string `json:"from"`   // the run forked
	Seq    uint64 `json:"seq"`
	Branch string `json:"branch"`
	Base   string `json:"base"` // the commit the branch starts at
}

// RunStatus is a run as the host sees it: its latest checkpoint, and
// whether a process is running it.
type RunStatus struct {
	Snapshot graph.Snapshot[state.ExecutionState] `json:"snapshot"`
	// Status is what a person is told: awaiting_approval while the run
	// waits on an interrupt, the state's status otherwise; serve's
	// "queued" and "starting" for a run without a checkpoint yet (then
	// Snapshot is empty but for its RunID).
	Status string `json:"status"`
	// Stopped is true for a run whose status is running that no process
	// runs (killed, or stopped by an error): Resume continues it.
	Stopped bool `json:"stopped,omitempty"`
	// Pending is true for a run serve has queued and not started.
	Pending bool `json:"pending,omitempty"`
}

// Checkpoint is one checkpoint of a run's history.
type Checkpoint struct {
	Seq       uint64    `json:"seq"`
	Parent    uint64    `json:"parent"`
	Step      int       `json:"step"`
	Ran       []string  `json:"ran"`
	Next      []string  `json:"next"` // empty when the run is done
	Status    string    `json:"status"`
	Interrupt string    `json:"interrupt,omitempty"` // the node waiting on an interrupt
	Time      time.Time `json:"time"`
}

// Kind is what became of a run an operation drove, queued or handed on.
type Kind string

// The outcomes of Start, Resume, Answer, Cancel and Submit.
const (
	// Completed: the run finished its plan.
	Completed Kind = "completed"
	// Parked: the run waits for its plan's approval.
	Parked Kind = "parked"
	// Asking: the run waits for a human's decision (recovery's question).
	Asking Kind = "asking"
	// Rejected: the human rejected the plan.
	Rejected Kind = "rejected"
	// Halted: the run ended halted or failed.
	Halted Kind = "halted"
	// Cancelled: the run was cancelled.
	Cancelled Kind = "cancelled"
	// Stopped: the run stopped on an error and is still running: Resume
	// continues it once the cause is fixed.
	Stopped Kind = "stopped"
	// Interrupted: the run was cut off, by the caller's context or by the
	// machine (a full disk); Resume continues it.
	Interrupted Kind = "interrupted"
	// HandedOn: another process continues the run (the one that holds
	// it), or has queued it (serve).
	HandedOn Kind = "handed_on"
)

// Outcome is what an operation did with a run.
type Outcome struct {
	RunID string `json:"run_id"`
	Kind  Kind   `json:"kind"`
	// Message says what happened in a line, for HandedOn, Stopped and
	// Interrupted (the cause and the fix), Halted (the reason).
	Message string `json:"message,omitempty"`
	// Notes are further lines the operation has to say (a cancel's
	// undone phase, the user's changes put back).
	Notes []string `json:"notes,omitempty"`
	// Question is recovery's question, for Asking.
	Question *nodes.Question `json:"question,omitempty"`
	// Err is the cause of Stopped and Interrupted, Message with its chain.
	Err error `json:"-"`
	// State is the run's state when the operation stopped driving it; nil
	// for HandedOn and across the socket.
	State *state.ExecutionState `json:"-"`
}

// Code says what an *Error refuses; front ends map it (the command line
// to an exit code).
type Code string

// The codes of *Error.
const (
	// Failure is an unexpected error.
	Failure Code = "failure"
	// Usage is a request the host cannot read or does not offer.
	Usage Code = "usage"
	// Invalid is an invalid plan or configuration.
	Invalid Code = "invalid"
	// Held is a run, store or work tree another process holds.
	Held Code = "held"
	// Refused is a failed precondition: no such run, a run already
	// finished, a dirty work tree, a missing key, a damaged store.
	Refused Code = "refused"
	// Waiting is a run that waits for a human, asked to do something
	// only an answer can do.
	Waiting Code = "waiting"
	// Machine is the machine's failure (a full disk): nothing is lost,
	// the operation works once it is fixed.
	Machine Code = "machine"
)

// Error is a refusal: its Code and the cause, a line that names the fix.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// errorf returns an *Error of code with a formatted cause (%w works).
func errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// CodeOf returns the Code of the *Error in err's chain, Failure without one.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}

// Errors of the package. Test for them with errors.Is.
var (
	// ErrNoRun is a request for the newest run of a kind when there is none.
	ErrNoRun = errors.New("host: no run fits")
	// ErrDirtyTree is a work tree with uncommitted changes a run refuses.
	ErrDirtyTree = errors.New("host: work tree has uncommitted changes")
	// ErrNoServe is Submit to a process that does not execute queued runs.
	ErrNoServe = errors.New("host: no serve process")
)

// Every implementation of Service, checked by the compiler.
var (
	_ Service = (*Host)(nil)
	_ Service = (*Client)(nil)
	_ Service = (*Pool)(nil)
	_ Service = holder{}
)

// BadCredentials reports whether err is an agent's key that is missing
// or that its provider refused (agent.ErrMissingKey, agent.ErrAuth): a
// precondition the user fixes, as front ends tell it.
func BadCredentials(err error) bool {
	return errors.Is(err, agent.ErrMissingKey) || errors.Is(err, agent.ErrAuth)
}
