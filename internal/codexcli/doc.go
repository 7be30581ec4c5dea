// Package codexcli pins OpenAI's Codex CLI (npm package @openai/codex) for
// tests that drive the real program, and installs it through
// internal/npmpin: into $GAFFER_CODEX_DIR when set, else
// $XDG_CACHE_HOME/gaffer/codex-VERSION. CI runs
// `scripts/install-npm-cli.sh codexcli` for the same step.
package codexcli
