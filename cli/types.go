package cli

import (
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

type graphResult = graph.Result[state.ExecutionState]
