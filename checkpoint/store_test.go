package checkpoint_test

import (
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/checkpointtest"
)

func TestMemoryConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Store { return checkpoint.NewMemory() })
}
