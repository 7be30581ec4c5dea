// Package runview is the one view model of a run's phase tree, shared by
// every front end that draws it: the command line's status, a run's
// progress (plain or live) and status --watch, and the inbox's web pages.
// Of builds a Tree from a run's state at a time (durations so far for a
// running phase); Mark, StatusWord and Kind are the words and marks every
// renderer shows for it, and Roles orders a run's usage by role.
package runview
