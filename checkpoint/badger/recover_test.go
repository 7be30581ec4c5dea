package badger

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// copyDir copies the files of a store that is still open, which is what a
// crashed process leaves behind (the OS still has every write).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		dst.Close()
	}
}

func TestBadgerProcessCrash(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seq := uint64(1); seq <= 5; seq++ {
		if err := s.Put(bg, loopCheckpoint("r", seq, loopPayload()), checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutWrites(bg, "r", 5, []checkpoint.Write{{TaskID: "t", Value: []byte("v")}}, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	copyDir(t, dir, crashed)

	c, err := Open(crashed, Options{})
	if err != nil {
		t.Fatalf("open after a crash: %v", err)
	}
	defer c.Close()
	got, err := c.Latest(bg, "r")
	if err != nil || !same(got, loopCheckpoint("r", 5, loopPayload())) {
		t.Fatalf("Latest after a crash = %+v, %v", got, err)
	}
	ws, err := c.Writes(bg, "r", 5)
	if err != nil || len(ws) != 1 {
		t.Fatalf("Writes after a crash = %v, %v", ws, err)
	}
}

func TestBadgerLargeValue(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := bytes.Repeat([]byte("z"), 3<<20) // beyond Badger's inline threshold
	cp := checkpoint.Checkpoint{RunID: "r", Seq: 1, Values: map[string][]byte{"big": big}}
	if err := s.Put(bg, cp, checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Latest(bg, "r")
	if err != nil || !bytes.Equal(got.Values["big"], big) {
		t.Fatalf("Latest = %d bytes, %v", len(got.Values["big"]), err)
	}
	huge := checkpoint.Checkpoint{RunID: "r", Seq: 2, Parent: 1, Values: map[string][]byte{"huge": make([]byte, MaxValueSize+1)}}
	if err := s.Put(bg, huge, checkpoint.PutOptions{}); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Fatalf("Put of a value over MaxValueSize: %v, want ErrInvalid", err)
	}
}

// TestBadgerSyncWAL guards the layout the sync fast path relies on: an open
// store has a memtable log to flush, and a synced Put survives a crash.
func TestBadgerSyncWAL(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.syncWAL(); err != nil {
		t.Fatalf("syncWAL on an open store: %v (Badger's file layout changed?)", err)
	}
	if !walOnly(100, []blob{{data: make([]byte, 2048)}}) || walOnly(100, []blob{{data: make([]byte, valueThreshold)}}) {
		t.Fatal("walOnly misjudges which writes reach the value log")
	}
	if err := s.Put(bg, loopCheckpoint("r", 1, loopPayload()), checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	copyDir(t, dir, crashed)
	c, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Latest(bg, "r"); err != nil {
		t.Fatalf("synced checkpoint after a crash: %v", err)
	}
}
