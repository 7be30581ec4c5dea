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
// their own, the Go caches (layered, so that the user's stay as they were)
// and /dev files (Confinement); reads are not restricted. Elsewhere they
// run unconfined and ToolboxOptions.Warn is told so. The CLI driver
// confines its agent's whole process group the same way (package
// agent/internal/landlock does it for both). Through the sandbox helper
// (SandboxMain), where the kernel allows, each command and session also
// runs in a PID namespace of its own: it sees and signals only its own
// processes, and none of them outlives it.
//
// Every command and CLI agent session runs in a process group of its own,
// killed when it ends. With a GroupRecorder, the group is recorded before
// the process may do anything: it starts behind a gate (a shell that waits
// on a pipe for gaffer's "go", then execs the command), so a gaffer killed
// at any moment leaves no unrecorded group. On Linux the group's leader
// also gets SIGKILL when gaffer dies (Pdeathsig).
//
// The drivers live in subpackages, each following this contract:
// agent/script plays back a script deterministically (the demo's and the
// tests' driver), agent/llm runs a language model in a loop of tool calls
// through langchaingo, and agent/cliagent runs an external
// coding agent such as Claude Code or Codex. agent/agenttest is the
// contract suite every Driver must pass.
//
// RunStructured runs a session with any driver and parses its output,
// asking once more in the same session, with the parse error, when the
// answer does not parse (ErrBadOutput after that).
package agent
