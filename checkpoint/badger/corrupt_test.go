package badger

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

var bg = context.Background()

// fillStore writes n loop checkpoints to a new store in dir and closes it.
func fillStore(t *testing.T, dir string, n int) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= uint64(n); seq++ {
		if err := s.Put(bg, loopCheckpoint("r", seq, loopPayload()), checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutWrites(bg, "r", 1, []checkpoint.Write{{TaskID: "t", Value: []byte("v")}}, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawSet overwrites keys in a closed store with raw Badger.
func rawSet(t *testing.T, dir string, kv map[string][]byte) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(txn *badger.Txn) error {
		for k, v := range kv {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rawGet(t *testing.T, dir string, key []byte) []byte {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v []byte
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantCorrupt(t *testing.T, err error, run string, seq uint64, what string) {
	t.Helper()
	var ce *checkpoint.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("err = %v, want *CorruptError", err)
	}
	if ce.RunID != run || ce.Seq != seq || ce.What != what {
		t.Fatalf("CorruptError names run %q seq %d %q, want run %q seq %d %q", ce.RunID, ce.Seq, ce.What, run, seq, what)
	}
}

func TestBadgerGarbledRecords(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 6)
	good := rawGet(t, dir, cpKey("r", 2))
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	future := bytes.Clone(good)
	future[0] = checkpoint.SchemaVersion + 1
	wRec := rawGet(t, dir, writeKey("r", 1, checkpoint.Write{TaskID: "t"}))
	var blobK []byte
	for _, ref := range mustDecode(t, good).refs {
		blobK = blobKey("r", ref)
	}
	rawSet(t, dir, map[string][]byte{
		string(cpKey("r", 1)): []byte("garbage that is not a record"),
		string(cpKey("r", 2)): flipped,
		string(cpKey("r", 3)): future,
		string(cpKey("r", 4)): good[:len(good)-3],
		string(writeKey("r", 1, checkpoint.Write{TaskID: "t"})): wRec[:len(wRec)-1],
		string(runPrefix(kindIndex, "other")):                   {checkpoint.SchemaVersion, 1, 2},
	})
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seq := uint64(1); seq <= 4; seq++ {
		_, err := s.Get(bg, "r", seq)
		wantCorrupt(t, err, "r", seq, "checkpoint")
	}
	_, err = s.Get(bg, "r", 3)
	if !strings.Contains(err.Error(), "unknown schema version") {
		t.Fatalf("future record: %v, want it to name the schema version", err)
	}
	if _, err := s.Latest(bg, "r"); err != nil {
		t.Fatalf("Latest (seq 6 is intact): %v", err)
	}
	_, err = s.List(bg, "r", checkpoint.ListOptions{})
	wantCorrupt(t, err, "r", 4, "checkpoint")
	_, err = s.Writes(bg, "r", 1)
	wantCorrupt(t, err, "r", 1, "write")
	_, err = s.Runs(bg)
	wantCorrupt(t, err, "other", 0, "run index")
	// A put on a damaged index fails rather than starting the run over.
	err = s.Put(bg, checkpoint.Checkpoint{RunID: "other", Seq: 1}, checkpoint.PutOptions{})
	wantCorrupt(t, err, "other", 0, "run index")

	// Now damage the shared payload blob: every checkpoint using it fails.
	s.Close()
	rawSet(t, dir, map[string][]byte{string(blobK): []byte("not the payload")})
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Latest(bg, "r")
	wantCorrupt(t, err, "r", 6, "blob")
}

func mustDecode(t *testing.T, rec []byte) cpRefs {
	t.Helper()
	c, err := decodeCheckpoint("r", 2, rec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBadgerTruncatedFiles truncates each kind of file Badger keeps. The
// store must either refuse to open with a clear error or open and answer
// every read with data or an error; it must never panic.
func TestBadgerTruncatedFiles(t *testing.T) {
	for _, pattern := range []string{"*.sst", "*.vlog", "MANIFEST", "*.sst:zero", "MANIFEST:zero"} {
		t.Run(pattern, func(t *testing.T) {
			dir := t.TempDir()
			fillStore(t, dir, 50)
			glob, zero := strings.CutSuffix(pattern, ":zero")
			files, _ := filepath.Glob(filepath.Join(dir, glob))
			if len(files) == 0 {
				t.Skipf("store has no %s file", glob)
			}
			for _, f := range files {
				info, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				size := info.Size() / 2
				if zero {
					size = 0
				}
				if err := os.Truncate(f, size); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(dir, Options{})
			if err != nil {
				if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("open error %q does not say the store %s is damaged", err, dir)
				}
				t.Logf("open: %v", err)
				return
			}
			if glob != "*.vlog" { // the loop's values never reach the value log
				t.Fatalf("store with a truncated %s opened", glob)
			}
			defer s.Close()
			cps, err := s.List(bg, "r", checkpoint.ListOptions{})
			t.Logf("opened; List: %d checkpoints, err %v", len(cps), err)
			for _, c := range cps {
				if !same(c, loopCheckpoint("r", c.Seq, loopPayload())) {
					t.Fatalf("List returned a wrong checkpoint %d", c.Seq)
				}
			}
		})
	}
}

func same(a, b checkpoint.Checkpoint) bool {
	ea, _ := encodeCheckpoint(a, 64)
	eb, _ := encodeCheckpoint(b, 64)
	return a.RunID == b.RunID && a.Seq == b.Seq && bytes.Equal(ea, eb)
}

func TestBadgerForeignDir(t *testing.T) {
	t.Run("unrelated files", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir, Options{})
		if !errors.Is(err, checkpoint.ErrForeignStore) || !strings.Contains(err.Error(), "notes.txt") {
			t.Fatalf("err = %v, want ErrForeignStore naming notes.txt", err)
		}
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			t.Fatalf("Open left %d files in a foreign directory", len(es))
		}
	})
	t.Run("badger without marker", func(t *testing.T) {
		dir := t.TempDir()
		rawSet(t, dir, map[string][]byte{"user-key": []byte("v")})
		_, err := Open(dir, Options{})
		if !errors.Is(err, checkpoint.ErrForeignStore) || !strings.Contains(err.Error(), "empty or new directory") {
			t.Fatalf("err = %v, want ErrForeignStore saying what to do", err)
		}
	})
	t.Run("other format version", func(t *testing.T) {
		dir := t.TempDir()
		rawSet(t, dir, map[string][]byte{string(markerKey): []byte("gaffer-checkpoint/99")})
		_, err := Open(dir, Options{})
		if !errors.Is(err, checkpoint.ErrForeignStore) || !strings.Contains(err.Error(), "gaffer-checkpoint/99") {
			t.Fatalf("err = %v, want ErrForeignStore naming the format", err)
		}
	})
	t.Run("interrupted creation", func(t *testing.T) {
		dir := t.TempDir()
		rawSet(t, dir, nil) // a Badger database with no keys
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("open of an empty Badger database: %v", err)
		}
		s.Close()
	})
	t.Run("missing dir is created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Open(dir, Options{}); err != nil {
			t.Fatalf("reopen: %v", err)
		}
	})
}

func TestBadgerLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open = %v, want ErrLocked naming %s", err, dir)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	s.Close()
}

func TestBadgerReopen(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 3)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Latest(bg, "r")
	if err != nil || !same(got, loopCheckpoint("r", 3, loopPayload())) {
		t.Fatalf("Latest after reopen = %+v, %v", got, err)
	}
	// Activity stamps continue after the ones on disk, even with a clock
	// that went backwards.
	s.env.Now = func() time.Time { return time.Unix(0, 0) }
	if err := s.Put(bg, checkpoint.Checkpoint{RunID: "new", Seq: 1}, checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(bg)
	if err != nil || len(runs) != 2 || runs[0].RunID != "new" {
		t.Fatalf("Runs = %+v, %v; want new first", runs, err)
	}
}

// TestBadgerQuiet checks that Badger prints nothing unless given a logger,
// and that a given logger receives its lines.
func TestBadgerQuiet(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	dir := t.TempDir()
	fillStore(t, dir, 3)
	os.Stderr = stderr
	w.Close()
	var out bytes.Buffer
	out.ReadFrom(r)
	if out.Len() != 0 {
		t.Fatalf("store wrote to stderr:\n%s", out.String())
	}

	var logs bytes.Buffer
	s, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(logs.String(), "component=badger") {
		t.Fatalf("logger got no Badger lines: %q", logs.String())
	}
}

func TestLockedMessage(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(dir, Options{})
	if want := "checkpoint: store " + dir + " is in use by another process"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
