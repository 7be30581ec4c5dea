// Package llm is the agent driver for language models through langchaingo:
// any OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM, Ollama's /v1)
// or Anthropic's Messages API, with a model per role and a price table for
// the cost. The model works in a loop of tool calls — read_file,
// write_file, edit_file, delete_file, list_files, grep, run_command,
// git_status, git_diff — done through an agent.Toolbox and limited to
// Session.Tools; a call it gets wrong (an unknown tool, arguments that are
// not JSON or lack a required one, a refused path) comes back to it as a
// tool error and the loop goes on. Its final text is Report.Output. A
// session ends failed at its turn limit or token budget. Rate limits and
// server errors are retried with backoff; a missing key is
// agent.ErrMissingKey and a refused one agent.ErrAuth, each naming the
// environment variable. The API key never reaches commands, messages,
// reports or errors. Conversations are kept in the driver's memory by
// session id, so they do not survive a restart: a resumed run's sessions
// start afresh.
package llm
