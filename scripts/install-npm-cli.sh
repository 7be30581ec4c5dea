#!/usr/bin/env bash
# Installs an agent CLI pinned in its vendor package under agent/cliagent
# (its pin.go: `const Version` and `var Pin`, see internal/npmpin) into the directory
# the agent tests look in, and prints the binary's path. The tests install
# it themselves when npm is there; CI runs this first so that the download
# is a separate, visible step.
#
#   scripts/install-npm-cli.sh claude     # Claude Code
#   scripts/install-npm-cli.sh codex      # Codex
#   scripts/install-npm-cli.sh gemini     # Gemini CLI
#   GAFFER_CODEX_DIR=/opt/codex scripts/install-npm-cli.sh codex
set -euo pipefail
cd "$(dirname "$0")/.."

pkgdir=agent/cliagent/${1:?usage: install-npm-cli.sh VENDOR (a package under agent/cliagent with a pin.go: claude, codex, gemini)}
src=$pkgdir/pin.go
if [ ! -f "$src" ]; then
  echo "install-npm-cli: $src does not exist; name a vendor package that pins a CLI: $(cd agent/cliagent && ls -d */pin.go 2>/dev/null | sed 's#/pin.go##' | tr '\n' ' ')" >&2
  exit 2
fi
field() { sed -n "s/^[[:space:]]*$1:[[:space:]]*\"\(.*\)\",\$/\1/p" "$src"; }
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$src")
name=$(field Name) package=$(field Package) binname=$(field Bin) direnv=$(field DirEnv) title=$(field Title)
if [ -z "$version" ] || [ -z "$name" ] || [ -z "$package" ] || [ -z "$binname" ] || [ -z "$direnv" ]; then
  echo "install-npm-cli: no pin (const Version, Pin{Name, Package, Bin, DirEnv}) in $src" >&2
  exit 1
fi
dir=${!direnv:-${XDG_CACHE_HOME:-$HOME/.cache}/gaffer/$name-$version}
bin=$dir/node_modules/.bin/$binname
pkg=$dir/node_modules/$package/package.json

if [ -x "$bin" ] && grep -q "\"version\": *\"$version\"" "$pkg" 2>/dev/null; then
  echo "$bin"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-npm-cli: npm not found; the $title tests will be skipped" >&2
  exit 1
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version" >&2
"$bin" --version >&2
echo "$bin"
