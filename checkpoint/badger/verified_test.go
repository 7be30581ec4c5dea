package badger

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4/table"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestOpenChecksumsEachTableOnce: the first open of a store checksums its
// tables whole and lists them in GAFFER-VERIFIED; later opens check a
// listed table's footer and index only, unless the file changed (a table
// rewritten with a byte flipped is refused again). A block damaged behind
// an unchanged size and time is found when it is read, by Badger's
// per-block checksum, as an error, never as wrong data.
func TestOpenChecksumsEachTableOnce(t *testing.T) {
	dir := t.TempDir()
	// Payloads that do not compress: the table has several blocks, and an
	// open reads only its last.
	const n = 300
	payloads := make(map[uint64][]byte, n)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= n; seq++ {
		b := make([]byte, 1024)
		rand.Read(b)
		payloads[seq] = fmt.Appendf(nil, "%q", hex.EncodeToString(b))
		if err := s.Put(bg, loopCheckpoint("r", seq, payloads[seq]), checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("store has no table file")
	}
	listed, marker := readVerified(dir)
	if marker != markerValue {
		t.Errorf("GAFFER-VERIFIED names marker %q, want %q", marker, markerValue)
	}
	f, biggest := "", int64(0)
	for _, tf := range tables {
		info, err := os.Stat(tf)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := table.ParseFileID(filepath.Base(tf))
		if !ok {
			t.Fatalf("table file %s", tf)
		}
		if st, ok := listed[id]; !ok || st.size != info.Size() || st.mtime != info.ModTime().UnixNano() {
			t.Errorf("GAFFER-VERIFIED lists %s as %+v (listed: %v); the file is %d bytes of %v", filepath.Base(tf), st, ok, info.Size(), info.ModTime())
		}
		if info.Size() > biggest {
			f, biggest = tf, info.Size()
		}
	}

	// A byte of the first block flipped behind the same size and time:
	// the open trusts the list, a read of the block says it is damaged.
	info, _ := os.Stat(f)
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), data...)
	damaged[100] ^= 0xff
	if err := os.WriteFile(f, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f, time.Time{}, info.ModTime()); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("open of a store whose listed table kept its size and time: %v", err)
	}
	bad := 0
	for seq := uint64(1); seq <= n; seq++ {
		cp, err := s.Get(bg, "r", seq)
		if err != nil {
			bad++
			continue
		}
		if !bytes.Equal(cp.Values["payload"], payloads[seq]) {
			t.Fatalf("checkpoint %d read back different data", seq)
		}
	}
	s.Close()
	t.Logf("%d of %d checkpoints unreadable", bad, n)
	if bad == 0 {
		t.Error("no read found the damaged block")
	}

	// The index damaged behind the same size and time: its check at
	// open refuses the store (Badger is not left to find it: its way out
	// of a table it cannot open races).
	index := append([]byte(nil), data...)
	chkLen := int(index[len(index)-1]) | int(index[len(index)-2])<<8
	index[len(index)-4-chkLen-4-1] ^= 0xff
	if err := os.WriteFile(f, index, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f, time.Time{}, info.ModTime()); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err == nil {
		s.Close()
		t.Fatal("a store whose listed table's index is damaged opened")
	}
	t.Logf("open with a damaged index: %v", err)
	if err := os.WriteFile(f, damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	// The first block's damage with the file's time changed, as any write leaves
	// it: checked whole, refused.
	if err := os.Chtimes(f, time.Time{}, info.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err == nil {
		s.Close()
		t.Fatal("a store with a rewritten, damaged table opened")
	}
	if !strings.Contains(err.Error(), filepath.Base(f)) || !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("open: %v; want the table named as damaged", err)
	}
}

// TestReadingOpenWritesNothing: a store opened for reading is opened
// read-only: reading it changes no byte of its directory (no new log,
// no compaction, no sync at close), a write is refused with ErrReadOnly,
// and an open for writing then finds it as it was.
func TestReadingOpenWritesNothing(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 50)
	// The first open after the writes lists their tables as checked.
	s, err := Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := treeHash(t, dir)
	s, err = Open(dir, Options{Reading: true})
	if err != nil {
		t.Fatal(err)
	}
	if runs, err := s.Runs(bg); err != nil || len(runs) == 0 {
		t.Fatalf("runs of a store opened for reading: %d, %v", len(runs), err)
	}
	if err := s.Put(bg, loopCheckpoint("r", 51, loopPayload()), checkpoint.PutOptions{Sync: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("a write to a store opened for reading: %v, want ErrReadOnly", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if treeHash(t, dir) != before {
		t.Fatal("a reading open changed the store's files")
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cp, err := s.Latest(bg, "r"); err != nil || cp.Seq != 50 {
		t.Fatalf("latest after the reading open: %d, %v", cp.Seq, err)
	}
}

// TestOpenTrustsAJudgedStore: an open that found this build's marker
// names it in GAFFER-VERIFIED, and the next open of the same tables skips
// the read-only open that judges the marker first. A file an older gaffer
// wrote (no marker line) is judged again and then completed. A store
// whose marker changed (a newer format, written over it) has other tables,
// and is refused as before, changing nothing.
func TestOpenTrustsAJudgedStore(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 3)
	for range 2 { // the first open of a new store has no MANIFEST to list
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if _, judged, err := checkTables(dir); err != nil || !judged {
		t.Fatalf("checkTables after two opens: judged %v, %v; want judged", judged, err)
	}

	// An older gaffer's file: the same tables, no marker line.
	path := filepath.Join(dir, verifiedFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), verifiedMarker+markerValue+"\n", "", 1)
	if old == string(b) {
		t.Fatalf("GAFFER-VERIFIED has no marker line:\n%s", b)
	}
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, judged, _ := checkTables(dir); judged {
		t.Fatal("a file without a marker line is trusted")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, judged, _ := checkTables(dir); !judged {
		t.Fatal("the open did not name the marker it found")
	}

	// A newer format over the judged store.
	rawSet(t, dir, map[string][]byte{string(markerKey): []byte("gaffer-checkpoint/99")})
	before := dirStamps(t, dir)
	_, err = Open(dir, Options{})
	if !errors.Is(err, checkpoint.ErrForeignStore) || !strings.Contains(err.Error(), "gaffer-checkpoint/99") {
		t.Fatalf("open of a store of another format = %v, want ErrForeignStore naming it", err)
	}
	if after := dirStamps(t, dir); !maps.Equal(before, after) {
		t.Fatalf("the refused open changed the store:\nbefore %v\nafter  %v", before, after)
	}
}

// dirStamps is every file of dir with its size and modification time.
func dirStamps(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%d %d", info.Size(), info.ModTime().UnixNano())
	}
	return out
}
