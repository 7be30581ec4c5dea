#!/usr/bin/env bash
# Installs the Claude Code CLI pinned in agent/internal/claudecode (Version)
# into the directory the agent tests look in, and prints the binary's path.
# The tests install it themselves when npm is there; CI may run this first
# so that the download is a separate, visible step.
#
#   scripts/install-claude-code.sh            # default directory
#   GAFFER_CLAUDE_CODE_DIR=/opt/cc scripts/install-claude-code.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' agent/internal/claudecode/install.go)
if [ -z "$version" ]; then
  echo "install-claude-code: no Version in agent/internal/claudecode/install.go" >&2
  exit 1
fi
dir=${GAFFER_CLAUDE_CODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gaffer/claude-code-$version}
bin=$dir/node_modules/.bin/claude
pkg=$dir/node_modules/@anthropic-ai/claude-code/package.json

if [ -x "$bin" ] && grep -q "\"version\": *\"$version\"" "$pkg" 2>/dev/null; then
  echo "$bin"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-claude-code: npm not found; the Claude Code tests will be skipped" >&2
  exit 1
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >&2
"$bin" --version >&2
echo "$bin"
