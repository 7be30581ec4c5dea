package cli

import (
	"os"
	"testing"
)

// TestMain runs the package's tests with GAFFER_IN_PLACE=1 (gaffer run
// --in-place) unless a test sets it otherwise: most of them look at what a
// run did in the checkout they made, and were written before runs had
// work trees of their own. The tests of work-tree runs (worktree_test.go)
// set GAFFER_IN_PLACE=false.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("GAFFER_IN_PLACE"); !ok {
		os.Setenv("GAFFER_IN_PLACE", "1")
	}
	os.Exit(m.Run())
}
