package main

import (
	"testing"

	"github.com/gaffer-dev/gaffer/examples/porting/internal/golden"
)

// TestOutput compares the lines in any order: which branch finishes first
// is up to the clock here (graph's TestStreamBranchUpdatesAsTheyFinish
// forces the order without one).
func TestOutput(t *testing.T) { golden.Check(t, "stream", main, true) }
