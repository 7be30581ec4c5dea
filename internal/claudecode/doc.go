// Package claudecode installs a pinned version of the Claude Code CLI from
// npm for tests that drive the real program (see scripts/install-claude-code.sh
// for the same step in CI).
//
// The install goes to $GAFFER_CLAUDE_CODE_DIR when set, else to
// $XDG_CACHE_HOME/gaffer/claude-code-VERSION (~/.cache when XDG_CACHE_HOME
// is unset), and is reused while the binary is there.
package claudecode
