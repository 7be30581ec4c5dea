// Package script is the deterministic agent driver used by the demo and the
// tests: Driver plays back a Script (Load reads one from YAML or JSON,
// strictly; the format is documented in SCRIPT-FORMAT.md), doing the
// developer's file and command work for real through an agent.Toolbox and
// answering the other roles from the script, under the same contract
// (agent.Driver) as the drivers for language models and external agents.
package script
