package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
)

// TestMain lets the test binary be the sandbox helper of in-place runs,
// as the gaffer binary is. After the tests it removes what they made
// once for all: the gaffer binary, the PostgreSQL server, and the
// temporary directories of the gaffer processes they killed.
func TestMain(m *testing.M) {
	agent.SandboxMain()
	code := m.Run()
	pgtest.Stop()
	if opsBin.path != "" {
		if err := os.RemoveAll(filepath.Dir(opsBin.path)); err != nil {
			fmt.Fprintln(os.Stderr, "cli tests:", err)
		}
	}
	if _, err := tmpdir.Sweep(""); err != nil {
		fmt.Fprintln(os.Stderr, "cli tests:", err)
	}
	os.Exit(code)
}
