// Package agenttest is the contract suite every agent.Driver must pass:
// Run gives a driver, made by the caller's factory, sessions whose agent
// is to do one Task each (answer, write inside the repository, try to
// write outside it, run a command that hangs, run a command that prints a
// secret) and checks what the contract promises — the report and its
// usage, a prompt stop with ctx's error on cancellation and no process
// left behind (its group recorded, then gone), file work confined to the
// repository, no secret in reports or messages, and a second session on
// the same driver. The factory scripts the agent's side for its driver: a
// script for the script driver, a fake model server for the llm and CLI
// drivers.
package agenttest
