// Package cliagent is the agent driver for external
// coding agents — Claude Code, Codex, or any command a Template describes
// as data: Driver runs each session as a fresh process in its own process
// group and reads its session id, usage and final text from its output; a
// failure it reports, a non-zero exit or a timeout is a failed
// agent.Report, and a timeout or cancellation kills the whole group. On
// Linux with Landlock the process and everything it starts can write only
// to the repository, a TMPDIR of its own, the Go caches, the agent's own
// state and /dev files, as the toolbox's commands. The
// package is not named cli because its main importer is gaffer's own
// package cli, the command line.
package cliagent
