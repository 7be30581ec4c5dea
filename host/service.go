package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Service is what every front end works through: the command line, the
// socket's other side, a web page. A *Host implements it in the process
// that holds the store, and Holder for other processes while a command
// holds it; a socket.Client implements it over the control socket,
// reaching the process that holds it; serve's pool.Pool queues the runs
// it is asked to start. A caller does not know which one it has.
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
	// question (a Verdict that Decides), and continues the run.
	Answer(ctx context.Context, req AnswerRequest) (Outcome, error)
	// Cancel ends an unfinished run for good.
	Cancel(ctx context.Context, req RunRequest) (Outcome, error)
	// Status is one run's latest checkpoint (the newest run for an empty
	// RunID) with what the host knows beside it.
	Status(ctx context.Context, req RunRequest) (RunStatus, error)
	// State is one run's latest checkpoint as it is (the newest run's for
	// an empty RunID): what a view of the run is drawn from.
	State(ctx context.Context, req RunRequest) (graph.Snapshot[state.ExecutionState], error)
	// List is every run of the store, newest first, each as its summary
	// where it has one (ListEntry): the one listing operation.
	List(ctx context.Context, req ListRequest) ([]ListEntry, error)
	// History is a run's checkpoints, newest first.
	History(ctx context.Context, req RunRequest) ([]Checkpoint, error)
	// Fork copies a checkpoint of a run into a new run on its own branch.
	Fork(ctx context.Context, req ForkRequest) (Forked, error)
	// Submit queues a new run in the process that executes runs (serve).
	Submit(ctx context.Context, spec RunSpec) (Outcome, error)
	// Delete removes a run's checkpoints and transcripts from the store;
	// its commits stay in git. A run a process is driving is refused; the
	// caller checks that the run has finished (gaffer delete, prune).
	Delete(ctx context.Context, req RunRequest) error
	// DeleteRuns deletes finished runs from the store with what they
	// leave in git, checking everything first (GitOps.DeleteRuns): gaffer
	// delete.
	DeleteRuns(ctx context.Context, req DeleteRequest) (Deleted, error)
	// Prune names the finished runs past those kept and removes what no
	// run owns in git (GitOps.Prune): gaffer prune.
	Prune(ctx context.Context, req PruneRequest) (Pruned, error)
	// Merge takes a finished run's branch into the checked-out branch
	// (GitOps.Merge): gaffer merge.
	Merge(ctx context.Context, req MergeRequest) (Merged, error)
	// Diff is the change a run, or one phase of it, committed
	// (GitOps.Diff): gaffer diff.
	Diff(ctx context.Context, req DiffRequest) (RunDiff, error)
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
	Parallel    int           `json:"parallel,omitempty"` // lanes of a phase at once; 0 takes the profile's
	// Repo is the submitter's work tree (absolute, symlinks resolved),
	// which serve checks is its own.
	Repo string `json:"repo,omitempty"`
	// InPlace runs in the user's checkout (gaffer run --in-place) instead
	// of the run's own work tree on its own branch.
	InPlace bool `json:"in_place,omitempty"`
	// TraceParent and TraceState are the W3C trace context of the
	// submitter's span (telemetry.Tracer.Submit), set by a front end that
	// traces and queued on the serve's job (serve.Job), whose worker links
	// the run's trace to it; empty when the front end does not trace.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
	// Plan is the plan file's content when the front end has read it
	// already (a pipe reads once); it does not cross a process.
	Plan []byte `json:"-"`
}

// RepoKey is the key of the repository whose work tree is root: its
// absolute, symlink-resolved path, so that two spellings of one work tree
// are one key. A RunSpec's Repo is its key; serve's pool keys the runs in
// place by it.
func RepoKey(root string) (string, error) {
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

// RunRequest names a run; "" picks the newest run that fits the operation.
type RunRequest struct {
	RunID string `json:"run_id,omitempty"`
}

// ListRequest asks for a listing of the store's runs: all of them.
type ListRequest struct{}

// Verdict is a human's answer to what a run waits for: its plan's
// approval (Approve, Reject) or recovery's question (Retry, Stop, and
// Skip where the question offers it). It is
// defined once and crosses every boundary as itself: the front ends, the
// control socket, serve's queue and its journal. The zero Verdict is no
// answer.
type Verdict uint8

// The verdicts.
const (
	// Approve runs the plan.
	Approve Verdict = iota + 1
	// Reject rejects the plan: with feedback the architect replans,
	// without it the run ends.
	Reject
	// Retry gives the phase recovery asks about another attempt (the
	// feedback its guidance).
	Retry
	// Stop stops the run recovery asks about.
	Stop
	// Skip approves the Doctor's skip_phase: the phase recovery asks
	// about is skipped (its work thrown away) and the run goes on with
	// the next one. Only a question that offers it takes it
	// (nodes.Question.OffersSkip).
	Skip
)

var verdictNames = [...]string{Approve: "approve", Reject: "reject", Retry: "retry", Stop: "stop", Skip: "skip"}

// String is the verdict's name: approve, reject, retry, stop or skip.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) && v != 0 {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// ParseVerdict reads a verdict's name (String).
func ParseVerdict(name string) (Verdict, error) {
	for v, n := range verdictNames {
		if n != "" && n == name {
			return Verdict(v), nil
		}
	}
	return 0, fmt.Errorf("%q: want approve, reject, retry, stop or skip", name)
}

// Decides reports whether v answers recovery's question (Retry, Stop,
// Skip) rather than the plan's approval.
func (v Verdict) Decides() bool { return v == Retry || v == Stop || v == Skip }

// goesOn reports whether the run goes on as asked (Approve, Retry, Skip):
// the graph's resume value's Approved.
func (v Verdict) goesOn() bool { return v == Approve || v == Retry || v == Skip }

// AnswerRequest is a human's answer to what a run waits for.
type AnswerRequest struct {
	RunID    string
	Verdict  Verdict
	Feedback string // the approval's notes, the rejection's changes, a retry's guidance
}

// answerWire is AnswerRequest as the control socket's v1 operations and
// serve's journal carry it: approved, with a decision for recovery's
// question, as every gaffer since v1 reads and writes it.
type answerWire struct {
	RunID    string `json:"run_id,omitempty"`
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
	Decision string `json:"decision,omitempty"` // retry, stop or skip
}

// MarshalJSON writes r in the v1 format (answerWire).
func (r AnswerRequest) MarshalJSON() ([]byte, error) {
	w := answerWire{RunID: r.RunID, Approved: r.Verdict != Reject, Feedback: r.Feedback}
	if r.Verdict.Decides() {
		w.Decision = r.Verdict.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads r in the v1 format (answerWire): a decision, else
// approved. A journal's answer written before decisions were kept (a
// nodes.Answer: approved and feedback) reads as Approve or Reject.
func (r *AnswerRequest) UnmarshalJSON(b []byte) error {
	var w answerWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = AnswerRequest{RunID: w.RunID, Feedback: w.Feedback, Verdict: Reject}
	switch {
	case w.Decision == "retry":
		r.Verdict = Retry
	case w.Decision == "stop":
		r.Verdict = Stop
	case w.Decision == "skip":
		r.Verdict = Skip
	case w.Decision != "":
		return fmt.Errorf("decision %q: want retry, stop or skip", w.Decision)
	case w.Approved:
		r.Verdict = Approve
	}
	return nil
}

// Check refuses a request without a verdict.
func (r AnswerRequest) Check() error {
	if r.Verdict < Approve || r.Verdict > Skip {
		return errorf(Usage, "no answer (%s): want approve, reject, retry, stop or skip", r.Verdict)
	}
	return nil
}

// NotDeciding refuses retry, stop or skip for run id, which waits for
// its plan's approval.
func NotDeciding(id string) error {
	return errorf(Usage, "run %s waits for its plan's approval, not for recovery's question: approve or reject it (not retry, stop or skip)", id)
}

// NotSkipping refuses skip for run id, whose recovery question q does not
// offer it (the Doctor did not propose skipping the phase); nil when it
// does, or for another verdict. The payload is the interrupt's, as the
// snapshot holds it.
func NotSkipping(id string, v Verdict, payload []byte) error {
	if v != Skip {
		return nil
	}
	var q nodes.Question
	if err := json.Unmarshal(payload, &q); err != nil || !q.OffersSkip() {
		return errorf(Usage, "run %s's question does not offer skip (the Doctor did not propose skipping the phase): answer retry or stop", id)
	}
	return nil
}

// Answer is the graph's resume value for r.
func (r AnswerRequest) Answer() nodes.Answer {
	return nodes.Answer{Approved: r.Verdict.goesOn(), Skip: r.Verdict == Skip, Feedback: r.Feedback}
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

// String says where the fork stands, as the commands tell it: "Forked
// FROM at checkpoint SEQ as RUN, on branch BRANCH at BASE." (BASE short).
func (f Forked) String() string {
	return fmt.Sprintf("Forked %s at checkpoint %d as %s, on branch %s at %s.", f.From, f.Seq, f.RunID, f.Branch, render.Short(f.Base))
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
	// LastError is, for a Stopped run, why it stopped (one line), as the
	// process that ran it kept it in the store; "" when none was kept.
	LastError string `json:"last_error,omitempty"`
	// Pending is true for a run serve has queued and not started.
	Pending bool `json:"pending,omitempty"`
}

// The statuses of a run without a checkpoint yet: waiting for a worker of
// serve's, or taken by one (or by Start).
const (
	StatusQueued   = "queued"
	StatusStarting = "starting"
)

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
	// Phase is the plan's phase the run was at (1-based) of Phases, with
	// its Attempt (0 before it started); all 0 before the plan exists.
	Phase   int `json:"phase,omitempty"`
	Phases  int `json:"phases,omitempty"`
	Attempt int `json:"attempt,omitempty"`
	// PhaseStatus is "skipped" when recovery skipped that phase (with the
	// human's approval); "" otherwise.
	PhaseStatus string `json:"phase_status,omitempty"`
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

// Classify returns the Code that err's cause, an error of the packages
// the host works on that no *Error carries, calls for: an invalid plan or
// run configuration is Invalid, a lease another process holds Held, a
// directory that is not a git repository, a missing or refused key and a
// damaged or foreign store Refused; ok is false for anything else. CodeOf
// does not classify: the socket sends an *Error's code as it is.
func Classify(err error) (c Code, ok bool) {
	var held *checkpoint.LeaseHeldError
	switch {
	case errors.Is(err, state.ErrInvalidPlan), errors.Is(err, state.ErrInvalidConfig):
		return Invalid, true
	case errors.As(err, &held):
		return Held, true
	case errors.Is(err, workspace.ErrNotRepo), BadCredentials(err):
		return Refused, true
	case errors.Is(err, checkpoint.ErrCorrupt), errors.Is(err, checkpoint.ErrForeignStore):
		// A damaged record or store: the message names the store and the fix.
		return Refused, true
	}
	return "", false
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
	_ Service = holder{}
)

// BadCredentials reports whether err is an agent's key that is missing
// or that its provider refused (agent.ErrMissingKey, agent.ErrAuth): a
// precondition the user fixes, as front ends tell it.
func BadCredentials(err error) bool {
	return errors.Is(err, agent.ErrMissingKey) || errors.Is(err, agent.ErrAuth)
}
