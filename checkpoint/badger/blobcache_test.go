package badger

import (
	"bytes"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestBadgerBlobReusedAfterPruneOrDelete checks the blob cache against the
// store: a blob that Prune or Delete removed is written again when a later
// checkpoint of the run uses the same value, so the checkpoint reads back.
func TestBadgerBlobReusedAfterPruneOrDelete(t *testing.T) {
	x := loopPayload()
	y := bytes.ReplaceAll(loopPayload(), []byte("x"), []byte("y"))
	owner := checkpoint.Owner{ID: "test", PID: 1, Host: "h"}
	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, s *Store) (next uint64)
	}{
		{"prune", func(t *testing.T, s *Store) uint64 {
			if err := s.Prune(bg, "r", 1); err != nil { // only seq 2 (y) stays: x's blob goes
				t.Fatal(err)
			}
			return 3
		}},
		{"delete", func(t *testing.T, s *Store) uint64 {
			if err := s.Delete(bg, "r"); err != nil {
				t.Fatal(err)
			}
			return 1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			lease, err := s.Acquire(bg, "r", owner, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			opts := checkpoint.PutOptions{Fence: lease.Token}
			if err := s.Put(bg, loopCheckpoint("r", 1, x), opts); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(bg, loopCheckpoint("r", 2, y), opts); err != nil {
				t.Fatal(err)
			}
			next := tc.remove(t, s)
			if next == 1 { // Delete took the lease too
				if lease, err = s.Acquire(bg, "r", owner, time.Hour); err != nil {
					t.Fatal(err)
				}
				opts.Fence = lease.Token
			}
			if err := s.Put(bg, loopCheckpoint("r", next, x), opts); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(bg, "r", next)
			if err != nil {
				t.Fatalf("Get after %s: %v", tc.name, err)
			}
			if !bytes.Equal(got.Values["payload"], x) {
				t.Fatalf("payload after %s = %.20q..., want x", tc.name, got.Values["payload"])
			}
		})
	}
}

// TestBadgerHashCacheMatchesNaive puts checkpoints whose large values stay,
// change, come back and are changed in place by the caller between Puts,
// and checks every record against the naive encoding (hashing every value)
// and every value read back.
func TestBadgerHashCacheMatchesNaive(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lease, err := s.Acquire(bg, "r", checkpoint.Owner{ID: "test", PID: 1, Host: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	shared := bytes.Repeat([]byte("a"), 300) // the caller reuses this slice
	other := bytes.Repeat([]byte("b"), 300)
	steps := []func(){
		func() {},
		func() {},                  // unchanged
		func() { shared[7] = 'z' }, // changed in place: same slice, new content
		func() {},
		func() { shared[7] = 'a' }, // back to the first content
		func() { shared = other },  // another slice
	}
	for i, change := range steps {
		change()
		seq := uint64(i + 1)
		cp := loopCheckpoint("r", seq, shared)
		cp.Values["fixed"] = other
		if err := s.Put(bg, cp, checkpoint.PutOptions{Fence: lease.Token}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(bg, "r", seq)
		if err != nil {
			t.Fatalf("step %d: Get: %v", i, err)
		}
		for name, v := range cp.Values {
			if !bytes.Equal(got.Values[name], v) {
				t.Fatalf("step %d: %s read back differs from what was put", i, name)
			}
		}
		naive, _ := encodeCheckpoint(cp, s.opts.BlobThreshold)
		var stored []byte
		if err := s.view(func(txn *badger.Txn) error {
			stored, _, err = getValue(txn, cpKey("r", seq))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stored, naive) {
			t.Fatalf("step %d: stored record differs from the naive encoding", i)
		}
	}
}
