package badger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestReadersShareAndAWriterWaitsForThem: stores opened for reading
// are open at once; an open for writing that may wait (WaitForReaders)
// waits for them, saying so once (OnWait), and meanwhile a new reader
// stands back, so readers in a loop cannot keep it out; one that may not
// wait is refused at once. Once the writer has the store, readers are
// refused (they reach it on its socket).
func TestReadersShareAndAWriterWaitsForThem(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 5)
	r1, err := Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatalf("a second reader beside the first: %v", err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("a writer that may not wait, beside readers: %v, want ErrLocked", err)
	}
	waiting := make(chan struct{})
	opened := make(chan *Store, 1)
	go func() {
		w, err := Open(dir, Options{WaitForReaders: time.Minute, OnWait: func() { close(waiting) }})
		if err != nil {
			t.Errorf("the waiting writer: %v", err)
		}
		opened <- w
	}()
	<-waiting
	if _, err := Open(dir, Options{Reading: true}); !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), "a writer is waiting") {
		t.Fatalf("a reader while a writer waits: %v, want it to stand back", err)
	}
	select {
	case <-opened:
		t.Fatal("the writer opened the store while readers held it")
	default:
	}
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	w := <-opened
	if w == nil {
		t.FailNow()
	}
	if err := w.Put(bg, loopCheckpoint("r", 6, loopPayload()), checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{Reading: true}); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("a reader while the writer has the store: %v, want ErrLocked", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if cp, err := r.Latest(bg, "r"); err != nil || cp.Seq != 6 {
		t.Fatalf("a reader after the writer: latest %d, %v", cp.Seq, err)
	}
}

// TestAWriterWaitsForReadersBoundedly: a reader that holds the store past
// the writer's bound gets the writer refused (ErrLocked, saying readers
// held it); a writer never waits for another writer.
func TestAWriterWaitsForReadersBoundedly(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 2)
	r, err := Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{WaitForReaders: 50 * time.Millisecond})
	if !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), "commands reading it held it for over 50ms") {
		t.Fatalf("a writer past its bound: %v", err)
	}
	r.Close()
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waited := false
	if _, err := Open(dir, Options{WaitForReaders: time.Minute, OnWait: func() { waited = true }}); !errors.Is(err, checkpoint.ErrLocked) || waited {
		t.Fatalf("a writer beside a writer: %v (waited: %v), want refused at once", err, waited)
	}
}

// TestReaderOfAKilledWritersStoreOpensItForWriting: memtable logs a
// killed writer left need a replay, which writes: the reader opens the
// store for writing, as before, and reads every checkpoint; the next
// reader opens it read-only.
func TestReaderOfAKilledWritersStoreOpensItForWriting(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 3)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(bg, loopCheckpoint("r", 4, loopPayload()), checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	// Killed: the store is never closed, its memtable log stays.
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if len(mems) == 0 {
		t.Fatal("no memtable log to replay")
	}
	backup := t.TempDir()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(backup, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for i, want := range []bool{false, true} {
		r, err := Open(backup, Options{Reading: true})
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		if cp, err := r.Latest(bg, "r"); err != nil || cp.Seq != 4 {
			t.Fatalf("reader %d: latest %d, %v; want the killed writer's 4", i, cp.Seq, err)
		}
		if r.readOnly != want {
			t.Errorf("reader %d opened read-only: %v, want %v", i, r.readOnly, want)
		}
		r.Close()
	}
}

// TestAWriterWaitsForAReaderThatOpenedForWriting: a reader that comes in
// the moment a writer's close has let go of the store but not yet
// removed its closing marker opens the store for writing, holding it
// alone; the next writer (the next `gaffer run`, started the moment the
// last one exited) waits for it as for any reader, saying so, where it
// was refused as if another writer held the store (1 run in 10 beside
// a status loop on a loaded machine).
func TestAWriterWaitsForAReaderThatOpenedForWriting(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 2)
	markLogs(dir, closingFile) // a writer's close, the moment before its unmark
	r, err := Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.readOnly {
		t.Fatal("the reader of a store with a closing marker opened it read-only; want for writing")
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("a writer that may not wait: %v, want ErrLocked", err)
	}
	waiting := make(chan struct{})
	opened := make(chan *Store, 1)
	go func() {
		w, err := Open(dir, Options{WaitForReaders: time.Minute, OnWait: func() { close(waiting) }})
		if err != nil {
			t.Errorf("the writer beside a reader that opened for writing: %v, want it to wait", err)
		}
		opened <- w
	}()
	select {
	case <-waiting:
	case w := <-opened:
		if w != nil {
			w.Close()
		}
		t.Fatal("the writer did not wait for the reader")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	w := <-opened
	if w == nil {
		t.FailNow()
	}
	defer w.Close()
	if _, err := w.Latest(bg, "r"); err != nil {
		t.Fatal(err)
	}
}
