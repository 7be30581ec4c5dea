package metrics

import "time"

// The names of the custom graph events (graph.Emit) that the workflow's
// nodes emit and the collectors here count. Payloads are the types below,
// passed by value.
const (
	EventPhaseFinished = "phase_finished" // payload PhaseFinished
	EventReview        = "review"         // payload Review
	EventAgentUsage    = "agent_usage"    // payload AgentUsage
	EventRunStatus     = "run_status"     // payload RunStatus
	// EventContextCost fires when context management (the summarizer
	// role) costs more than ContextCostLimit of the run so far.
	EventContextCost = "context_cost" // payload ContextCost
)

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
)

// PhaseFinished reports the end of one phase attempt (or review iteration).
type PhaseFinished struct {
	Phase     int           // 1-based phase number
	Attempt   int           // 1-based attempt
	Iteration int           // 1-based review iteration within the attempt
	Outcome   string        // one of the Outcome constants
	Duration  time.Duration // from the agent's start to the verdict
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
}

// RunStatus reports a run's workflow status changing (From is "" for a new
// run). Statuses are state.RunStatus strings: running, awaiting_approval,
// completed, failed, halted, rejected, cancelled.
type RunStatus struct {
	From, To string
}
