package events

import "time"

// The names of the custom graph events (graph.Emit) that the workflow's
// nodes emit and package metrics counts. Payloads are the types below,
// passed by value.
const (
	EventPhaseFinished = "phase_finished" // payload PhaseFinished
	EventReview        = "review"         // payload Review
	EventAgentUsage    = "agent_usage"    // payload AgentUsage
	EventRunStatus     = "run_status"     // payload RunStatus
	// EventContextCost fires when context management (the summarizer
	// role) costs more than ContextCostLimit of the run so far.
	EventContextCost = "context_cost" // payload ContextCost

	// Recovery's events (issue 11).
	EventRecoveryFailure  = "recovery_failure"  // payload RecoveryFailure: a failed attempt recorded
	EventRecoveryDecision = "recovery_decision" // payload RecoveryDecision: what recovery decided, and why
	EventDoctorCall       = "doctor_call"       // payload DoctorCall: the Doctor answered
	EventReplan           = "replan"            // payload Replan: the replanner answered
	EventStuckDecision    = "stuck_decision"    // payload StuckDecision: the stuck handler decided
	EventBudgetWarning    = "budget_warning"    // payload BudgetWarning: 80% of the run's budget is spent

	// EventDeclaredFiles fires after a developer session whose changes
	// and its tasks' declared files (files: lines) differ.
	EventDeclaredFiles = "declared_files" // payload DeclaredFiles

	// A lane's developer session (a phase of several lanes, issue 31):
	// EventLaneStarted before the session, EventLaneFinished after it
	// (its error on a failed one). EventAgentUsage between them carries
	// the same Phase, Lane and Tasks.
	EventLaneStarted  = "lane_started"  // payload LaneSession
	EventLaneFinished = "lane_finished" // payload LaneSession

	// EventModelCall fires after each model call of an agent session
	// (each usage the driver streams), EventToolCall after each tool
	// call or command it ran, both before the session's EventAgentUsage;
	// EventGitWork after each piece of the workflow's git work. They
	// carry names, tokens and times; a model call carries its prompt and
	// completion, redacted, only where telemetry.content asks for them
	// (ModelCall.InputMessages), and never a tool's output otherwise.
	EventModelCall = "model_call" // payload ModelCall
	EventToolCall  = "tool_call"  // payload ToolCall
	EventGitWork   = "git_work"   // payload GitWork
)

// ModelCall reports one model call of an agent session: the session's
// role, phase and lane (1-based; 0 in a phase of one), the model (or the
// driver's name when it has none), the call's tokens, when it started and
// how long it took. Error is set when the call failed.
type ModelCall struct {
	Role         string
	Phase        int
	Lane         int
	Model        string
	InputTokens  int
	OutputTokens int
	Start        time.Time
	Duration     time.Duration
	Error        string
	// InputMessages and OutputMessages are the call's content as the
	// OpenTelemetry GenAI semantic conventions' gen_ai.input.messages and
	// gen_ai.output.messages (JSON arrays of messages of parts): what the
	// session sent since its previous model call (the session's prompt,
	// then the tool results) and what the model answered (its text and
	// tool calls). Redacted as transcripts are and bounded; empty unless
	// the workflow keeps content (nodes.Config.TraceContent).
	InputMessages  string
	OutputMessages string
}

// ToolCall reports one tool call of an agent session (the llm driver's
// tools, the script driver's write and run actions, a CLI agent's tool
// calls from its stream): the tool's name, when it started and how long
// it took. Error is set, without the tool's output, when it failed.
type ToolCall struct {
	Role     string
	Phase    int
	Lane     int
	Tool     string
	Start    time.Time
	Duration time.Duration
	Error    string
}

// The kinds of git work, the values of GitWork.Op.
const (
	GitWorktree = "worktree" // a lane's work tree made at its base
	GitCommit   = "commit"   // a phase's or a lane's work committed
	GitCombine  = "combine"  // a phase's lanes merged onto its base
)

// GitWork reports one piece of the workflow's git work: Op is a Git
// constant, Phase and Lane (1-based; 0 for the phase's own) say whose,
// Start and Duration when and how long. Error is set when it failed.
type GitWork struct {
	Phase    int
	Lane     int
	Op       string
	Start    time.Time
	Duration time.Duration
	Error    string
}

// The outcomes of a lane's session, the values of LaneSession.Status on
// EventLaneFinished.
const (
	LaneDone   = "done"   // the session's work is committed on the lane's ref
	LaneFailed = "failed" // the session failed; Error says why
	// LaneStopped: the lane's node stopped on an error of gaffer's own
	// (the run stops for resume, which runs the lane again).
	LaneStopped = "stopped"
)

// LaneSession names one lane's developer session: its phase, its lane
// (1-based) and the task ids it does. On EventLaneFinished, Status is a
// Lane constant, Error the failure and Duration the session's time.
type LaneSession struct {
	RunID    string
	Phase    int
	Lane     int
	Attempt  int
	Tasks    []string
	Status   string
	Error    string
	Duration time.Duration
}

// DeclaredFiles reports a session's changes against its tasks' declared
// files: the paths it changed that no task declared, and the declared
// files it neither created nor changed. Strict is set when the profile's
// strict_files made it a failed attempt.
type DeclaredFiles struct {
	Phase      int
	Attempt    int
	Lane       int // 1-based, in a phase of several lanes; 0 in a phase of one
	Undeclared []string
	Untouched  []string
	Strict     bool
}

// RecoveryFailure reports a failed attempt as recovery recorded it.
type RecoveryFailure struct {
	Phase, Attempt int
	Category       string
	Fingerprint    string
}

// RecoveryDecision reports one recovery decision.
type RecoveryDecision struct {
	Phase int
	// Lane names the lanes of a phase of several the decision is about
	// ("2", or "1, 2a+2b"); "" for the whole phase.
	Lane     string
	Decision string
	Why      string
}

// DoctorCall reports one Doctor answer: the tier asked and the action
// advised ("none" for no advice, such as an answer that did not parse).
type DoctorCall struct {
	Phase  int
	Tier   string
	Action string
}

// Replan reports one replanner answer and what it came to: Outcome is
// "accepted" (a revision within the phase's goal anchor), "refused" (a
// revision that narrows the phase) or "no_revision" (the replanner failed
// or answered no revision; also what an empty Outcome means).
type Replan struct {
	Phase   int
	Outcome string
}

// StuckDecision reports the stuck handler's decision.
type StuckDecision struct {
	Phase    int
	Decision string
	Why      string
}

// BudgetWarning reports that a run has spent 80% of its budget.
type BudgetWarning struct {
	Remaining float64 // the fraction left
}

// ContextCostLimit is the share of a run's cost that context management
// may take before EventContextCost fires (seed 004: under 10%).
const ContextCostLimit = 0.10

// ContextCost reports context management's share of a run's cost: the
// summarizer's cost over every role's (tokens when no cost is known).
type ContextCost struct {
	Phase int     // the phase whose boundary was summarised
	Share float64 // 0..1
}

// The outcomes of a phase attempt, the values of PhaseFinished.Outcome.
const (
	OutcomeCompleted = "completed" // approved and committed
	OutcomeRetried   = "retried"   // rejected or failed; another iteration or attempt follows
	OutcomeFailed    = "failed"    // the agent failed and no attempt is left (the run fails or halts)
	OutcomeHalted    = "halted"    // rejected at the limit; the run halts
	OutcomeSkipped   = "skipped"   // recovery skipped it with the human's approval; nothing committed
)

// PhaseFinished reports the end of one phase attempt (or review iteration).
type PhaseFinished struct {
	Phase     int           // 1-based phase number
	Attempt   int           // 1-based attempt
	Iteration int           // 1-based review iteration within the attempt
	Outcome   string        // one of the Outcome constants
	Duration  time.Duration // from the agent's start to the verdict
	Lanes     int           // the phase's lanes; 1 (or 0, from older emitters) for a phase of one
}

// Review reports one reviewer verdict.
type Review struct {
	Phase     int
	Iteration int // 1-based review iteration of the phase
	Approved  bool
}

// AgentUsage reports the tokens and cost of one agent session.
type AgentUsage struct {
	Role         string // architect, developer, reviewer, evaluator
	Model        string // the model name, or the driver name when there is none ("script")
	InputTokens  int
	OutputTokens int
	CachedTokens int
	CostUSD      float64
	// Phase, Lane and Tasks name a lane's developer session (Lane
	// 1-based); they are zero for any other session.
	Phase int
	Lane  int
	Tasks []string
	// Expansions counts the session's expansions of an earlier phase's
	// Task Story records (seed 004's escape hatch); 0 for most.
	Expansions int
}

// RunStatus reports a run's workflow status changing (From is "" for a new
// run). Statuses are state.RunStatus strings: running, awaiting_approval,
// completed, failed, halted, rejected, cancelled.
type RunStatus struct {
	From, To string
}
