// Package agent runs the workflow's agent sessions: the architect that
// writes the plan, the developer that carries out a phase, the reviewer
// that judges it and the evaluator that sorts the reviewer's points.
//
// A Driver runs one Session — a role, a prompt, a repository directory, the
// tools allowed and a session id to continue — and returns a Report: the
// status, a summary, the final output, the files changed, the error context
// when it failed, the session id and the token usage. While it runs it
// streams Messages (text, tool calls, tool results, usage) to
// Session.OnMessage. Run's error is kept for sessions that could not run at
// all; an agent that tried and failed is a failed Report, which the
// workflow treats as a rejected attempt.
//
// Every driver's final output is read the same way: ExtractPlan for the
// architect's plan markdown, ParseReview for the reviewer's
// {approved, comments, items} JSON, ParseEvaluation for the evaluator's
// {items} JSON, each tolerant of fences and prose around the answer and
// strict about what is inside it.
//
// File and command work is done through a Toolbox, which confines it to the
// repository: absolute paths, ".." and symbolic links leading outside are
// refused, .git is never changed, and commands run without the
// environment's secrets (API keys, tokens, passwords).
//
// ScriptDriver is the deterministic driver used by the demo and the tests:
// it plays back a Script (LoadScript reads one from YAML or JSON, strictly;
// the format is documented in SCRIPT-FORMAT.md), doing the developer's file
// and command work for real and answering the other roles from the script.
// The drivers for language models and external agent commands follow the
// same contract.
package agent
