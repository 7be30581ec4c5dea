#!/usr/bin/env bash
# Installs the Codex CLI pinned in internal/codexcli (Version)
# into the directory the agent tests look in, and prints the binary's path.
# The tests install it themselves when npm is there; CI may run this first
# so that the download is a separate, visible step.
#
#   scripts/install-codex.sh            # default directory
#   GAFFER_CODEX_DIR=/opt/codex scripts/install-codex.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' internal/codexcli/install.go)
if [ -z "$version" ]; then
  echo "install-codex: no Version in internal/codexcli/install.go" >&2
  exit 1
fi
dir=${GAFFER_CODEX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gaffer/codex-$version}
bin=$dir/node_modules/.bin/codex
pkg=$dir/node_modules/@openai/codex/package.json

if [ -x "$bin" ] && grep -q "\"version\": *\"$version\"" "$pkg" 2>/dev/null; then
  echo "$bin"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-codex: npm not found; the Codex tests will be skipped" >&2
  exit 1
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@openai/codex@$version" >&2
"$bin" --version >&2
echo "$bin"
