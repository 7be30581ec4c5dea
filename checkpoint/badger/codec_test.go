package badger

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// FuzzDecodeCheckpoint feeds arbitrary bytes to the decoder: it must return
// a record or a *CorruptError, never panic, and whatever it accepts must
// decode the same after encoding again.
func FuzzDecodeCheckpoint(f *testing.F) {
	full := checkpoint.Checkpoint{RunID: "r", Seq: 3, Parent: 2, Step: -1, Ran: []string{"a"}, Next: []string{},
		Values:    map[string][]byte{"n": nil, "e": {}, "s": []byte("x"), "big": bytes.Repeat([]byte("y"), 100)},
		Interrupt: &checkpoint.Interrupt{Node: "n", Kind: "before", Payload: []byte("{}"), Answers: [][]byte{nil, {}}},
		Meta:      map[string]string{"k": "v"}, Time: time.Unix(5, 6)}
	for _, cp := range []checkpoint.Checkpoint{full, {RunID: "r", Seq: 3, Parent: 2}} {
		rec, _ := encodeCheckpoint(cp, 64)
		f.Add(rec)
	}
	f.Add([]byte{checkpoint.SchemaVersion})
	f.Fuzz(func(t *testing.T, rec []byte) {
		c, err := decodeCheckpoint("r", 3, rec)
		if err != nil {
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) || ce.RunID != "r" || ce.Seq != 3 {
				t.Fatalf("error %v is not a *CorruptError for r/3", err)
			}
			return
		}
		if len(c.refs) > 0 {
			return // blob references need a store to resolve
		}
		// What the decoder accepts survives an encode/decode round trip.
		again, _ := encodeCheckpoint(c.cp, 1<<30)
		c2, err := decodeCheckpoint("r", 3, again)
		if err != nil || !reflect.DeepEqual(c2.cp, c.cp) {
			t.Fatalf("round trip of an accepted record: %v\n%#v\n%#v", err, c.cp, c2.cp)
		}
	})
}

func TestBadgerLargeRunDeleteAndPrune(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = batchKeys + 500 // more keys than one transaction removes
	for _, run := range []string{"big", "small"} {
		for seq := uint64(1); seq <= n; seq++ {
			cp := loopCheckpoint(run, seq, loopPayload())
			if seq%2 == 0 { // a blob used only by even checkpoints
				cp.Values["extra"] = bytes.Repeat([]byte{byte(seq)}, 100)
			}
			if err := s.Put(bg, cp, checkpoint.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if run == "small" {
				break
			}
		}
	}
	if err := s.Prune(bg, "big", 1); err != nil {
		t.Fatal(err)
	}
	// Left: the latest checkpoint and its blobs (the payload, and its
	// extra value when n is even).
	wantBlobs := 1
	if n%2 == 0 {
		wantBlobs = 2
	}
	if got := countKeys(t, s, runPrefix(kindBlob, "big")); got != wantBlobs {
		t.Fatalf("%d blobs left after Prune(1), want %d", got, wantBlobs)
	}
	if got := countKeys(t, s, runPrefix(kindCheckpoint, "big")); got != 1 {
		t.Fatalf("%d checkpoints left after Prune(1), want 1", got)
	}
	if err := s.Delete(bg, "big"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []byte{kindCheckpoint, kindWrite, kindBlob, kindLease, kindIndex} {
		if got := countKeys(t, s, runPrefix(kind, "big")); got != 0 {
			t.Fatalf("%d %c keys left after Delete", got, kind)
		}
	}
	got, err := s.Latest(bg, "small")
	if err != nil || !same(got, loopCheckpoint("small", 1, loopPayload())) {
		t.Fatalf("the other run after Delete: %+v, %v", got, err)
	}
}

func countKeys(t *testing.T, s *Store, prefix []byte) int {
	t.Helper()
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestChunksHoldWhatIsAdded: a chunks list (Runs's) hands back every
// entry added, in order, across the chunks' bounds, and moves none as it
// grows.
func TestChunksHoldWhatIsAdded(t *testing.T) {
	var c chunks[int]
	var ptrs []*int
	for i := range 5000 {
		p := c.add()
		if *p != 0 {
			t.Fatalf("entry %d not zero: %d", i, *p)
		}
		*p = i
		ptrs = append(ptrs, p)
	}
	if c.n != 5000 {
		t.Fatalf("n = %d", c.n)
	}
	for i, p := range ptrs {
		if c.at(i) != p || *p != i {
			t.Fatalf("entry %d: at %p holds %d, added at %p", i, c.at(i), *c.at(i), p)
		}
	}
	if len(c.cs) != 8 { // 32+64+…+4096 = 8160 ≥ 5000 > 4064
		t.Errorf("%d chunks for 5,000 entries, want 8", len(c.cs))
	}
}
