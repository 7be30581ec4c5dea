// Package demo is `gaffer demo`'s offline project: its plan and script,
// embedded so that the demo needs no files beside the binary; Setup, which
// creates the demo repository at a fixed commit; and what the demo shows
// after its run (ShowLog, GoTest on the run's branch, WriteRecovery's
// account of the recovery the run went through). The command (package
// cli) opens the host and drives the run.
package demo
