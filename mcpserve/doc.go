// Package mcpserve is gaffer as a Model Context Protocol server (`gaffer
// mcp`): the tools, resources and progress notifications a user's own
// coding agent (Claude Code, Codex, Cursor, VS Code) drives gaffer's runs
// with, built on the official Go SDK. It only translates: every run
// operation goes through a Backend, which the command line implements
// with host.Service (the store opened here, or the process that holds it:
// a running serve or a run), so that the server adds no new path to the
// store. What changes a run is done where it outlives this server (a
// serve, or a detached gaffer process). Tool errors are results the model
// reads (IsError), never a crash: an unknown run, a plan over the size
// limit or a cancelled request changes nothing. Text that can be large
// (diffs, logs) is cut to a bound and says so. The pure parts (the cut,
// the progress of a run, the plan's check) are apart from the I/O.
package mcpserve
