// Package npmpintest gives tests a pinned agent CLI (an npmpin.Pin, such
// as claude.Pin, codex.Pin or gemini.Pin in agent/cliagent): installed
// when needed, skipped where it cannot be, kept apart from npmpin so that
// the vendor packages that hold the pins do not import package testing.
package npmpintest
