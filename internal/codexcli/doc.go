// Package codexcli installs a pinned version of OpenAI's Codex CLI from npm
// for tests that drive the real program (see scripts/install-codex.sh for
// the same step in CI).
//
// The install goes to $GAFFER_CODEX_DIR when set, else to
// $XDG_CACHE_HOME/gaffer/codex-VERSION (~/.cache when XDG_CACHE_HOME is
// unset), and is reused while the binary is there.
package codexcli
