package codexcli

import (
	"context"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/npmpin"
)

// Version is the pinned Codex version. Versions change their tools and
// defaults from week to week; move the pin deliberately.
const Version = "0.171.0"

// Pin is Codex at Version.
var Pin = npmpin.Pin{
	Title:   "Codex",
	Name:    "codex",
	Package: "@openai/codex",
	Version: Version,
	Bin:     "codex",
	DirEnv:  "GAFFER_CODEX_DIR",
}

// Install returns the path of the codex binary of Version, installing it
// with npm first when needed (npmpin.Pin.Install).
func Install(ctx context.Context) (string, error) { return Pin.Install(ctx) }

// ForTest returns the pinned codex binary for a test that drives the real
// program, or skips the test (npmpin.Pin.ForTest).
func ForTest(t testing.TB) string {
	t.Helper()
	return Pin.ForTest(t)
}
