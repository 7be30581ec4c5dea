// Package claudecode pins the Claude Code CLI (npm package
// @anthropic-ai/claude-code) for tests that drive the real program, and
// installs it through internal/npmpin: into $GAFFER_CLAUDE_CODE_DIR when
// set, else $XDG_CACHE_HOME/gaffer/claude-code-VERSION. CI runs
// `scripts/install-npm-cli.sh claudecode` for the same step.
package claudecode
