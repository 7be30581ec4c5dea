package badger

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// bigValueCheckpoint is checkpoint seq of run "r" with a value of its own
// over Badger's 64 KiB inline threshold: a blob that goes to the value log.
func bigValueCheckpoint(seq uint64) checkpoint.Checkpoint {
	cp := loopCheckpoint("r", seq, loopPayload())
	v := make([]byte, 100<<10)
	for i := range v {
		v[i] = byte(i*7 + int(seq)*13)
	}
	cp.Values = map[string][]byte{"big": v}
	return cp
}

// newestLog returns the newest file of dir whose name ends in ext.
func newestLog(t *testing.T, dir, ext string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	if len(logs) == 0 {
		t.Fatalf("no %s file in %s", ext, dir)
	}
	slices.Sort(logs)
	return logs[len(logs)-1]
}

// TestBadgerTornValueLogEntryIsNotDamage kills a store, as it were, while
// it copies a checkpoint's large value into the value log, and opens it.
// Badger writes the value log through a memory map before the memtable
// log that points into it, so the kill leaves the checkpoint before as the
// newest (its memtable log has no pointer to the torn entry) and the value
// log with the entry in one of the states a memmove cut short leaves: its
// first bytes only, or (Go's AVX copy of more than 256 bytes: body first,
// then the first 32 and the last 128 bytes) its body without its head and
// tail. None of that is damage: the store opens, the checkpoint before and
// its own large value read back whole, and the store takes the torn
// checkpoint again.
func TestBadgerTornValueLogEntryIsNotDamage(t *testing.T) {
	const n = 4
	live := t.TempDir()
	s, err := Open(live, Options{SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seq := uint64(1); seq < n; seq++ {
		if err := s.Put(bg, bigValueCheckpoint(seq), checkpoint.PutOptions{Sync: true}); err != nil {
			t.Fatal(err)
		}
	}
	before := copyStore(t, live)
	if err := s.Put(bg, bigValueCheckpoint(n), checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	after := copyStore(t, live)

	vlog := filepath.Base(newestLog(t, before, ".vlog"))
	if got := filepath.Base(newestLog(t, after, ".vlog")); got != vlog {
		t.Fatalf("the last checkpoint went to value log %s, not %s", got, vlog)
	}
	old, err := os.ReadFile(filepath.Join(before, vlog))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(filepath.Join(after, vlog))
	if err != nil {
		t.Fatal(err)
	}
	// The entries the last checkpoint added to the value log; its large
	// value is the one of more than 64 KiB.
	var start, end int64
	oldEnd := int64(0)
	for _, e := range logEntries(t, old) {
		oldEnd = e[1]
	}
	for _, e := range logEntries(t, whole) {
		if e[0] >= oldEnd && e[1]-e[0] > 64<<10 {
			start, end = e[0], e[1]
		}
	}
	if start == 0 {
		t.Fatalf("the last checkpoint wrote no entry of more than 64 KiB to %s after byte %d", vlog, oldEnd)
	}
	if !bytes.Equal(old[:start], whole[:start]) {
		t.Fatal("the value log before the last checkpoint is not a prefix of the one after it")
	}

	tears := map[string]func(b []byte){
		"its first bytes":            func(b []byte) { copy(b[start:], whole[start:start+4096]) },
		"all but its last byte":      func(b []byte) { copy(b[start:], whole[start:end-1]) },
		"its body, not head or tail": func(b []byte) { copy(b[start+17:], whole[start+17:end-128]) },
	}
	for name, tear := range tears {
		t.Run(name, func(t *testing.T) {
			dir := copyStore(t, before)
			b := slices.Clone(old)
			tear(b)
			if err := os.WriteFile(filepath.Join(dir, vlog), b, 0o600); err != nil {
				t.Fatal(err)
			}
			// A reader first (gaffer status after the kill), then a writer
			// (gaffer resume).
			for _, opts := range []Options{{Reading: true}, {}} {
				c, err := Open(dir, opts)
				if err != nil {
					t.Fatalf("open (Reading %v) after a kill inside the value log's last entry: %v", opts.Reading, err)
				}
				got, err := c.Latest(bg, "r")
				if err != nil {
					t.Fatal(err)
				}
				if want := bigValueCheckpoint(n - 1); got.Seq != n-1 || !bytes.Equal(got.Values["big"], want.Values["big"]) {
					t.Fatalf("Reading %v: latest checkpoint %d with a %d-byte value; want %d and its value whole", opts.Reading, got.Seq, len(got.Values["big"]), n-1)
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Put(bg, bigValueCheckpoint(n), checkpoint.PutOptions{Sync: true}); err != nil {
				t.Fatalf("the torn checkpoint again: %v", err)
			}
			if got, err := c.Get(bg, "r", n); err != nil || !bytes.Equal(got.Values["big"], bigValueCheckpoint(n).Values["big"]) {
				t.Fatalf("the torn checkpoint written again reads back %d bytes, %v", len(got.Values["big"]), err)
			}
		})
	}
}
