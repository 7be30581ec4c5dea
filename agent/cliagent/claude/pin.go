package claude

import "github.com/gaffer-dev/gaffer/internal/npmpin"

// Version is the pinned Claude Code version, which the tests drive.
// Versions change their tools and defaults from week to week; move the pin
// deliberately.
const Version = "2.1.330"

// Pin is Claude Code at Version: installed by the tests
// (npmpintest.ForTest) and by `scripts/install-npm-cli.sh claude` into
// $GAFFER_CLAUDE_CODE_DIR when set, else
// $XDG_CACHE_HOME/gaffer/claude-code-VERSION.
var Pin = npmpin.Pin{
	Title:   "Claude Code",
	Name:    "claude-code",
	Package: "@anthropic-ai/claude-code",
	Version: Version,
	Bin:     "claude",
	DirEnv:  "GAFFER_CLAUDE_CODE_DIR",
}
