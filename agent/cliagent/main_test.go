package cliagent

import (
	"os"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

func TestMain(m *testing.M) {
	agent.SandboxMain()
	os.Exit(m.Run())
}
