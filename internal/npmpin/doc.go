// Package npmpin installs a pinned version of a command-line program
// published on npm (the agent CLIs, whose pins their vendor packages in
// agent/cliagent hold) for tests that drive the real
// program, and finds it again. A Pin names the package, its version, its
// binary and where it goes: the directory an environment variable names,
// else $XDG_CACHE_HOME/gaffer/NAME-VERSION (~/.cache when XDG_CACHE_HOME is
// unset). An install is reused while the binary of that version is there.
// scripts/install-npm-cli.sh does the same step in CI.
package npmpin
