package cli

import (
	"os"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

// TestMain lets the test binary be the sandbox helper of in-place runs,
// as the gaffer binary is.
func TestMain(m *testing.M) {
	agent.SandboxMain()
	os.Exit(m.Run())
}
