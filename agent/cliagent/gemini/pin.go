package gemini

import "github.com/gaffer-dev/gaffer/internal/npmpin"

// Version is the pinned Gemini CLI version, which the tests drive.
// Versions change their tools and defaults from week to week; move the pin
// deliberately.
const Version = "0.61.0"

// Pin is the Gemini CLI at Version: installed by the tests
// (npmpintest.ForTest) and by `scripts/install-npm-cli.sh gemini` into
// $GAFFER_GEMINI_CLI_DIR when set, else
// $XDG_CACHE_HOME/gaffer/gemini-cli-VERSION.
var Pin = npmpin.Pin{
	Title:   "Gemini CLI",
	Name:    "gemini-cli",
	Package: "@google/gemini-cli",
	Version: Version,
	Bin:     "gemini",
	DirEnv:  "GAFFER_GEMINI_CLI_DIR",
}
