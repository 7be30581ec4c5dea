package main

import (
	"testing"

	"github.com/gaffer-dev/gaffer/examples/porting/internal/golden"
)

func TestOutput(t *testing.T) { golden.Check(t, "command", main, false) }
