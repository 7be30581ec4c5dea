package graph_test

import (
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
)

// eachStore runs f as subtests store=memory and store=badger, the latter on
// a real Badger store on disk, closed when the subtest ends.
func eachStore(t *testing.T, f func(t *testing.T, store checkpoint.Store)) {
	t.Helper()
	t.Run("store=memory", func(t *testing.T) { f(t, checkpoint.NewMemory()) })
	t.Run("store=badger", func(t *testing.T) { f(t, openBadger(t)) })
}

// openBadger opens a Badger store in a temporary directory for the test.
func openBadger(t *testing.T) *badger.Store {
	t.Helper()
	store, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatalf("badger.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return store
}
