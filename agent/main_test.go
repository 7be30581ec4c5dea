package agent

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	SandboxMain()
	os.Exit(m.Run())
}
