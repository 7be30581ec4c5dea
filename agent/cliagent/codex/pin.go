package codex

import "github.com/gaffer-dev/gaffer/internal/npmpin"

// Version is the pinned Codex version, which the tests drive. Versions
// change their tools and defaults from week to week; move the pin
// deliberately.
const Version = "0.171.0"

// Pin is Codex at Version: installed by the tests (npmpintest.ForTest) and
// by `scripts/install-npm-cli.sh codex` into $GAFFER_CODEX_DIR when set,
// else $XDG_CACHE_HOME/gaffer/codex-VERSION.
var Pin = npmpin.Pin{
	Title:   "Codex",
	Name:    "codex",
	Package: "@openai/codex",
	Version: Version,
	Bin:     "codex",
	DirEnv:  "GAFFER_CODEX_DIR",
}
