package agent

import "github.com/gaffer-dev/gaffer/agent/internal/proc"

// SandboxMain makes the program able to confine the commands and CLI
// sessions of in-place runs, whose work tree holds the repository's .git:
// Landlock cannot take .git out of the directory it lets them write, so
// such a command starts through the program itself, as a helper that makes
// .git read-only in a mount namespace of the command's own before it
// confines it with Landlock. Call SandboxMain first thing in main (and in
// the TestMain of tests that run such commands): when the program was
// started as the helper it never returns. A program that does not call it
// runs these commands with .git writable, and ToolboxOptions.Warn (or the
// CLI driver's Warn) is told once.
func SandboxMain() { proc.HelperMain() }
