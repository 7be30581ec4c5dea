// Package clikit is what the cli driver (agent/cliagent) and the agent CLI
// vendor packages beside it (claude, codex, gemini) share: the command
// Template, the Vendor interface a vendor package implements, the Result
// its output parser returns and the outage classification vendors have in
// common. It imports no vendor, so that cliagent can list them all in one
// table without a cycle.
package clikit
