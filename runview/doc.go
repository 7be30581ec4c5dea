// Package runview is the one view model of a run, shared by every front
// end: the command line's status, list and their --json, a run's progress
// (plain or live), status --watch, and the inbox's web pages. RunOf builds
// a Run, the whole view (status, phases, cost, the question the run waits
// on, its branch, the last error of a stopped run, its phase tree), from
// what the host says of a run; Of builds the phase tree (Tree) from a
// run's state at a time (durations so far for a running phase); PlanOf is
// the stored plan as the human approves it. Mark, StatusWord and Kind are
// the words and marks every renderer shows, and Roles orders a run's
// usage by role. It does no I/O.
package runview
