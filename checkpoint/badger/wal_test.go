package badger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// treeHash hashes the names, modes and contents of every file under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// copyStore copies the regular files of src into a new directory.
func copyStore(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "LOCK" || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// killedStore writes n checkpoints to a store and copies its files while
// it is still open: what a process killed by SIGKILL leaves on disk (the
// memory-mapped logs are in the page cache). It returns the copy and the
// copy's memtable log.
func killedStore(t *testing.T, n int) (dir, mem string) {
	t.Helper()
	return killedStoreOf(t, n, func(uint64) []byte { return loopPayload() })
}

// killedStoreOf is killedStore with the state of checkpoint seq
// payload(seq).
func killedStoreOf(t *testing.T, n int, payload func(seq uint64) []byte) (dir, mem string) {
	t.Helper()
	live := t.TempDir()
	s, err := Open(live, Options{SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seq := uint64(1); seq <= uint64(n); seq++ {
		if err := s.Put(bg, loopCheckpoint("r", seq, payload(seq)), checkpoint.PutOptions{Sync: true}); err != nil {
			t.Fatal(err)
		}
	}
	dir = copyStore(t, live)
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if len(mems) != 1 {
		t.Fatalf("the killed store has %d memtable logs, want 1", len(mems))
	}
	return dir, mems[0]
}

// logEnd returns the offset just past the last byte of mem that is not zero.
func logEnd(t *testing.T, mem string) int64 {
	t.Helper()
	b, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(strings.TrimRight(string(b), "\x00")))
}

func latestSeq(t *testing.T, dir string) uint64 {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	cp, err := s.Latest(bg, "r")
	if err != nil {
		t.Fatalf("latest: %v", err)
	}
	return cp.Seq
}

// TestBadgerDamagedMemtableLogIsRefused garbles eight bytes of the
// memtable log of a killed store, at offsets all through its records.
// Badger alone opens such a store after cutting the log at the damaged
// entry: the run goes back to an older checkpoint without a word. The
// store must refuse to open instead, as damaged, naming the log, and leave
// every file as it was.
func TestBadgerDamagedMemtableLogIsRefused(t *testing.T) {
	const n = 6
	dir, mem := killedStore(t, n)
	end := logEnd(t, mem)
	t.Logf("memtable log %s: records end at byte %d", filepath.Base(mem), end)

	// Killed but undamaged: every checkpoint is there.
	clean := copyStore(t, dir)
	if got := latestSeq(t, clean); got != n {
		t.Fatalf("the killed store's latest checkpoint is %d, want %d", got, n)
	}

	pristine, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	// Garble the log in place, eight bytes at a time, and put them back
	// after each open: rewriting the whole log (megabytes, mostly zeros)
	// forty times cost most of the test's time.
	f, err := os.OpenFile(mem, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garble := []byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04}
	// The last transaction's entries may end in a zero byte; stop before.
	step := max((end-logHeaderSize-100)/40, 1)
	for off := int64(logHeaderSize); off < end-100; off += step {
		writeAt(t, f, garble, off)
		before := treeHash(t, dir)
		s, err := Open(dir, Options{})
		if err == nil {
			cp, lerr := s.Latest(bg, "r")
			s.Close()
			t.Fatalf("garbled at byte %d: the store opened (latest %d, %v), want it refused as damaged", off, cp.Seq, lerr)
		}
		if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(mem)) ||
			!strings.Contains(err.Error(), "is damaged") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("garbled at byte %d: open error %q, want one line saying the store is damaged and naming %s", off, err, filepath.Base(mem))
		}
		if after := treeHash(t, dir); after != before {
			t.Fatalf("garbled at byte %d: the failed open changed the store's files", off)
		}
		if off == logHeaderSize {
			t.Logf("open: %v", err)
		}
		writeAt(t, f, pristine[off:off+int64(len(garble))], off)
	}
}

// writeAt writes b into f at off.
func writeAt(t *testing.T, f *os.File, b []byte, off int64) {
	t.Helper()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestBadgerTornLogTailIsNotDamage cuts the memtable log of a killed
// store inside its last entry, as a process killed while copying that
// entry into the log leaves it: the store opens and the checkpoints before
// the torn transaction are there.
func TestBadgerTornLogTailIsNotDamage(t *testing.T) {
	const n = 6
	dir, mem := killedStore(t, n)
	end := logEnd(t, mem)
	b, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	for i := end - 10; i < end; i++ {
		b[i] = 0
	}
	if err := os.WriteFile(mem, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := latestSeq(t, dir); got != n-1 {
		t.Fatalf("latest checkpoint after a torn last write is %d, want %d", got, n-1)
	}
}

// TestBadgerHeadTornLogEntryIsNotDamage kills a store, as it were, in the
// middle of copying the last checkpoint's largest entry into the memtable
// log. Go copies more than 256 bytes body first, then the first 32 and the
// last 128 (amd64's memmove with AVX): the entry's head, 1 to 32 bytes as
// the destination is aligned, is still zeros, its body is written, its
// tail and all after it are zeros. That is no damage: the store opens at
// the checkpoint before. The same head torn with a whole entry after it is
// damage, and refused.
func TestBadgerHeadTornLogEntryIsNotDamage(t *testing.T) {
	const n = 6
	// Each checkpoint's own state, so that the last transaction writes one
	// (a state written before is not written again).
	dir, mem := killedStoreOf(t, n, func(seq uint64) []byte {
		return fmt.Appendf(nil, "%q", strings.Repeat(strconv.FormatUint(seq, 10), 2000))
	})
	pristine, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	// The last entry of more than 256 bytes: the last checkpoint's state.
	var start, end int64
	for _, e := range logEntries(t, pristine) {
		if e[1]-e[0] > 256 {
			start, end = e[0], e[1]
		}
	}
	if start == 0 {
		t.Fatal("no entry of more than 256 bytes in the log")
	}
	for _, head := range []int64{1, 3, 17, 32} {
		b := append([]byte(nil), pristine...)
		clear(b[start : start+head])
		clear(b[end-128:])
		torn := copyStore(t, dir)
		if err := os.WriteFile(filepath.Join(torn, filepath.Base(mem)), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := latestSeq(t, torn); got != n-1 {
			t.Fatalf("head of %d bytes torn: latest checkpoint %d, want %d", head, got, n-1)
		}
	}
	// A torn-looking head with whole entries after it was not cut by a
	// kill: the entries after would be dropped.
	b := append([]byte(nil), pristine...)
	clear(b[start : start+32])
	damaged := copyStore(t, dir)
	if err := os.WriteFile(filepath.Join(damaged, filepath.Base(mem)), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(damaged, Options{}); !errors.Is(err, checkpoint.ErrCorrupt) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("a zeroed head with entries after it: open error %v, want it refused as damaged", err)
	}
}

// logEntries returns the start and end of each entry of the memtable log
// b, read as Badger reads them, up to the first that does not check out.
func logEntries(t *testing.T, b []byte) [][2]int64 {
	t.Helper()
	size := int64(len(b))
	r := bufio.NewReader(bytes.NewReader(b[logHeaderSize:]))
	var out [][2]int64
	for off := int64(logHeaderSize); ; {
		n, _, ok := readLogEntry(r, off, size)
		if !ok {
			return out
		}
		out = append(out, [2]int64{off, off + n})
		off += n
	}
}

// TestBadgerFailedOpenChangesNothing damages a store in ways that make
// Open fail — a garbled value log (values over 64 KiB live there),
// a Badger database without gaffer's marker — and checks that the failed
// open left every file as it was. Badger cuts a damaged value log at the
// damaged entry when it opens, and writes a new memtable log.
func TestBadgerFailedOpenChangesNothing(t *testing.T) {
	big := func(seq uint64) checkpoint.Checkpoint {
		cp := loopCheckpoint("r", seq, loopPayload())
		v := make([]byte, 100<<10)
		for i := range v {
			v[i] = byte(i*7 + int(seq))
		}
		cp.Values = map[string][]byte{"big": v}
		return cp
	}
	t.Run("garbled value log", func(t *testing.T) {
		dir := t.TempDir()
		s, err := Open(dir, Options{BlobThreshold: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		for seq := uint64(1); seq <= 4; seq++ {
			if err := s.Put(bg, big(seq), checkpoint.PutOptions{Sync: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
		slices.Sort(vlogs)
		vlog := vlogs[len(vlogs)-1]
		b, err := os.ReadFile(vlog)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 200<<10 {
			t.Fatalf("the value log %s holds %d bytes; the values did not go there", vlog, len(b))
		}
		copy(b[len(b)/3:], []byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04})
		if err := os.WriteFile(vlog, b, 0o600); err != nil {
			t.Fatal(err)
		}
		before := treeHash(t, dir)
		s, err = Open(dir, Options{})
		if err == nil {
			s.Close()
			t.Fatal("a store with a garbled value log opened")
		}
		t.Logf("open: %v", err)
		if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(vlog)) {
			t.Fatalf("open error %q does not say the value log %s is damaged", err, filepath.Base(vlog))
		}
		if treeHash(t, dir) != before {
			t.Fatal("the failed open changed the store's files")
		}
	})
	t.Run("no marker", func(t *testing.T) {
		dir := t.TempDir()
		rawSet(t, dir, map[string][]byte{"theirs": []byte("data")})
		before := treeHash(t, dir)
		s, err := Open(dir, Options{})
		if err == nil {
			s.Close()
			t.Fatal("a Badger database without a marker opened")
		}
		t.Logf("open: %v", err)
		if treeHash(t, dir) != before {
			t.Fatal("the failed open changed the database's files")
		}
	})
}
