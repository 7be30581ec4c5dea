package claudecode

import (
	"context"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/npmpin"
)

// Version is the pinned Claude Code version. Versions change their tools
// and defaults from week to week; move the pin deliberately.
const Version = "2.1.330"

// Pin is Claude Code at Version.
var Pin = npmpin.Pin{
	Title:   "Claude Code",
	Name:    "claude-code",
	Package: "@anthropic-ai/claude-code",
	Version: Version,
	Bin:     "claude",
	DirEnv:  "GAFFER_CLAUDE_CODE_DIR",
}

// Install returns the path of the claude binary of Version, installing it
// with npm first when needed (npmpin.Pin.Install).
func Install(ctx context.Context) (string, error) { return Pin.Install(ctx) }

// ForTest returns the pinned claude binary for a test that drives the real
// program, or skips the test (npmpin.Pin.ForTest).
func ForTest(t testing.TB) string {
	t.Helper()
	return Pin.ForTest(t)
}
