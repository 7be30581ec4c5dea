// Package events names the workflow's custom graph events and defines their
// payloads, passed by value through graph.Emit: PhaseFinished ends one phase
// attempt or review iteration with an Outcome (completed, retried, failed,
// halted) and its duration; Review is one reviewer verdict; AgentUsage is the
// tokens and cost of one agent session; RunStatus is a run's status changing;
// ContextCost is context management going over ContextCostLimit of the run's
// cost; and recovery's RecoveryFailure (a failed attempt recorded),
// RecoveryDecision (what recovery decided, and why), DoctorCall (the Doctor's
// answer), Replan (a replanner call), StuckDecision (the stuck handler's
// decision) and BudgetWarning (80% of the run's budget spent); DeclaredFiles
// is a session's changes against its tasks' declared files; ModelCall and
// ToolCall are one model call and one tool call of a session, GitWork one
// piece of git work (a lane's work tree, a commit, the lanes' combine),
// with their start and duration, for the trace (package telemetry). Package nodes
// emits them; package metrics subscribes and counts them, and the CLI's
// progress view and the serve log (eventLogger) subscribe and show some of
// them. The package is a leaf: it imports only the standard library, so that
// emitters and subscribers share these types without importing each other.
package events
