// Package state holds the workflow's data: ExecutionState and its parts
// (the run's identity and configuration, the plan, the progress through its
// phases, the human's approval, token usage and the outcome), the plan
// parser with its checks and phase layering, and the codec for
// execution-state.json.
//
// Every type is a plain value. Transitions (the With… methods, or Clone
// followed by changes to the copy) return a new state and never change the
// one they were given, so a graph node can hand its input back unchanged
// on error and a checkpoint never aliases live state. Nothing in the
// package reads the clock or a random source: the caller passes the run id
// and creation time to NewRun, and everything derived from them (the slug,
// the execution directory) is fixed there once and never recomputed on
// resume.
//
// A plan is markdown. Each task is a "### Task <id>: <title>" heading,
// optionally followed by the bullet lines "- type: test|impl|refactor",
// "- depends on: 1a, 1b" (or "none") and "- files: a.go, b_test.go", then
// free text up to the next task heading; the text before the first task is
// the preamble. A task with no depends-on line depends on the task before
// it. A plan with any type or depends-on line runs in phased mode: tasks are
// layered by the longest dependency path from a root, one layer per phase,
// in natural id order within it (2 < 10, 1a < 1b). A plain plan runs in task
// mode: one task per phase, in document order. ParsePlan reports every
// problem at once (duplicate ids, unknown dependencies, cycles, impl tasks
// without a test task before them, an empty plan), each naming its task ids
// and line, as a *PlanError.
//
// Each phase keeps the progress of its lanes (PhaseState.Lanes: a lane is
// a group of the phase's tasks that one fresh session does, GroupLanes):
// status, attempt, review iteration, session, work tree, base and head
// commits, usage and last error. The run keeps no cursor of its own; the
// current phase is the last one started (Progress.CurrentPhase).
//
// Encode and Decode read and write the state as JSON with a
// schema_version field; Decode refuses newer versions and unknown fields
// rather than dropping data silently, and reads version 1 (one cursor per
// run, before lanes) by migrating it (MigrateV1).
package state
