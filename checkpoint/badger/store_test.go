package badger_test

import (
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/checkpoint/checkpointtest"
)

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Store {
		s, err := badger.Open(t.TempDir(), badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
