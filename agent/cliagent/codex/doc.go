// Package codex is OpenAI Codex's knowledge for the cli driver
// (agent/cliagent): its built-in template ("codex exec --json"), the
// parser of its JSON lines, its outage classification, the state it writes
// ($CODEX_HOME or $HOME/.codex) for confinement, the flags that skip its
// approvals and sandbox, and its pinned npm install. The driver lists it
// in its vendor table.
package codex
