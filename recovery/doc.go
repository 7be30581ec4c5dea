// Package recovery is the pure core of what the workflow does when phases
// keep failing (issue 11, seed 003): it classifies a failed attempt,
// fingerprints and compares error texts, decides when to call the Doctor
// (and which model) and when to replan, parses the Doctor's answer, keeps
// every budget, freezes each phase's goal anchor and checks a revised
// approach against it, and decides what a stuck phase does next.
//
// # No I/O, no clock, no randomness
//
// Nothing here reads files, the clock or a random source, or calls an
// agent. The workflow calls these functions, carries out what they
// decide and keeps their Memory in its checkpointed state. Every function
// takes values and returns new ones; none changes its arguments, so a
// node can hand its input back unchanged on error.
//
// # What is persisted, and when
//
// Memory is the whole of recovery's memory: per phase, the failed
// attempts (category, fingerprint, a bounded tail of the real error
// text), the Doctor's hints and latest advice, the counters of Doctor
// calls, replans (reserved, answered with a revision, accepted) and
// escalations, and the frozen goal anchor; per run,
// the Doctor calls (all, strong, infra), replans, escalations and the one
// pending call. It is JSON-tagged and meant to be a field of the state.
// Every list in it is bounded (failures, tail runes, hints), and
// RecordFailure masks token-shaped secrets in the tails it keeps.
//
// Budgets are reserved before a call: Reserve returns the Memory with the
// call's budgets counted and the call pending. The workflow checkpoints
// that Memory, then calls the Doctor or the replanner, then records the
// outcome (CompleteDoctor, CompleteReplan, Complete) and checkpoints
// again. A crash loop therefore never exceeds a budget. The budgets count
// reservations; what reads "replanned already" (the stuck handler,
// ChooseTier, status) counts only the replans that answered with a
// revision. On resume a pending call was cut off
// by a crash: RetryPending allows it exactly once more (checkpoint its
// result first) and abandons it after that, as "no advice".
//
// # The rules
//
//   - Classify: a configured fatal pattern, then the driver's error kind
//     (infra, budget, timeout, truncation, tool error), then the llm
//     driver's report of a turn limit or session token budget
//     (truncation), then build errors
//     and test failures found in Go, TypeScript and Python output, then a
//     review rejection, then agent_gave_up.
//   - Normalize and Ratio: paths, positions, temp dirs, addresses,
//     goroutine ids, durations, hashes, UUIDs, timestamps and ANSI codes
//     are folded; Ratio is Python difflib's SequenceMatcher.ratio with its
//     autojunk rule.
//   - ShouldReplan: the last two failures of a phase share a category and
//     are at least 0.8 similar (messages under 30 runes compare by
//     category alone; always by category with message similarity off),
//     or at once for a fatal category; never for a fatal error type; at
//     most one replan per phase and five per run.
//   - DoctorRequest, ChooseTier, StrongFollowUp: the Doctor from the
//     second failed attempt, at the first for infra, never for a fatal
//     error type; the cheap model for a low-risk category (infra), the
//     strong one for a high-risk category (build, test and tool errors),
//     for other complex failures and when the cheap one is less than 0.7
//     confident; a diagnosis naming a fatal error type asks the human;
//     budgets of 2 calls per phase, 10 per run, 5 strong, 3 infra (infra
//     calls draw on the infra budget instead of the phase's).
//   - ParseDoctorAnswer: strict JSON; a malformed answer is a counted call
//     and no advice, never a default action.
//   - FreezeAnchor and CheckRevision: a revision may split, merge or
//     reorder the anchor's tasks, but keeps its files and test tasks,
//     promises in its tasks every name, file, command and criterion the
//     goal names (RequiredOf), each in a task of its kind, puts none of
//     them or the tests off (Defers reads deferral by meaning), and adds
//     no word that always narrows; Constraint renders the anchor verbatim
//     for the replan prompt. RewritesTasks and SecondOpinionPrompt are
//     the reviewer model's question about a revision that passes but
//     rewrites the tasks: its no can only add a refusal.
//   - CheckTestChanges: a phase's test files before and after, judged for
//     fewer tests, assertions or cases, skips and commented-out lines;
//     Go assertions counted by what they call (testcount.go).
//   - Budget: the run's cost and token spending; Remaining feeds the
//     stuck handler, Warn says when 80% is spent, Over and
//     BudgetSpentWhy name the limits spent with their true figures.
//   - FatalType: a failure of one of seed 003's fatal_error_types
//     (wrong_tech_stack, schema_mismatch, api_contract_wrong by default)
//     goes to the stuck handler at once.
//   - Stuck: needs_human (a fatal error type, then ambiguity), stop,
//     reduce_scope, truncation (twice in a row: replan to split,
//     escalate_model or reduce_scope), replan, escalate_model, stop, in
//     that order.
package recovery
