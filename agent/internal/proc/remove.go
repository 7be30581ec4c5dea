package proc

import "github.com/gaffer-dev/gaffer/internal/tmpdir"

// RemoveTree removes dir and everything beneath it, as os.RemoveAll
// does, and also what a session left in directories it made read-only
// (Go's module cache makes its directories 0555): see tmpdir.RemoveTree.
func RemoveTree(dir string) error { return tmpdir.RemoveTree(dir) }
