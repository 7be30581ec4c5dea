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
// environment's secrets (API keys, tokens, passwords). On Linux with
// Landlock, commands can write only under the repository, a TMPDIR of
// their own, the Go caches and /dev files (Confinement); reads are not
// restricted. Elsewhere they run unconfined and ToolboxOptions.Warn is
// told so.
//
// Every command and CLI agent session runs in a process group of its own,
// killed when it ends. With a GroupRecorder, the group is recorded before
// the process may do anything: it starts behind a gate (a shell that waits
// on a pipe for gaffer's "go", then execs the command), so a gaffer killed
// at any moment leaves no unrecorded group. On Linux the group's leader
// also gets SIGKILL when gaffer dies (Pdeathsig).
//
// ScriptDriver is the deterministic driver used by the demo and the tests:
// it plays back a Script (LoadScript reads one from YAML or JSON, strictly;
// the format is documented in SCRIPT-FORMAT.md), doing the developer's file
// and command work for real and answering the other roles from the script.
// The drivers for language models and external agent commands follow the
// same contract.
//
// LLMDriver runs sessions with a language model through langchaingo: any
// OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM, Ollama's /v1) or
// Anthropic's Messages API, with a model per role and a price table for
// the cost. The model works in a loop of tool calls — read_file,
// write_file, edit_file, delete_file, list_files, grep, run_command,
// git_status, git_diff — done through a Toolbox and limited to
// Session.Tools; a call it gets wrong (an unknown tool, arguments that are
// not JSON or lack a required one, a refused path) comes back to it as a
// tool error and the loop goes on. Its final text is Report.Output. A
// session ends failed at its turn limit or token budget. Rate limits and
// server errors are retried with backoff; a missing key is ErrMissingKey
// and a refused one ErrAuth, each naming the environment variable. The API
// key never reaches commands, messages, reports or errors. Conversations
// are kept in the driver's memory by session id, so they do not survive a
// restart: a resumed run's sessions start afresh.
//
// CLIDriver runs an external coding agent (Claude Code, Codex, or any
// command a CLITemplate describes as data) as a fresh process per session,
// in its own process group, and reads its session id, usage and final text
// from its output; a failure it reports, a non-zero exit or a timeout is a
// failed Report, and a timeout or cancellation kills the whole group.
//
// RunStructured runs a session with any driver and parses its output,
// asking once more in the same session, with the parse error, when the
// answer does not parse (ErrBadOutput after that).
package agent
