package badger

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestBadgerShortLogIsRefused cuts a log Badger replays on open — the
// newest value log of a closed store holding values over 64 KiB, the
// memtable log of a killed store — to less than its 20-byte header (zero
// bytes, as a careless copy or a full disk leaves it, and ten). Badger
// never writes such a file: a zero-length value log made the open fail
// only after Badger had grown it to 64 MiB and written a memtable log (so
// the next command opened the store, its values gone), a shorter header
// was deleted without a word, and a memtable log cut to nothing took the
// run back to an older checkpoint. The store must refuse to open, naming
// the file, and leave every file as it was.
func TestBadgerShortLogIsRefused(t *testing.T) {
	vlogStore := func(t *testing.T) (dir, log string) {
		dir = t.TempDir()
		s, err := Open(dir, Options{BlobThreshold: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		for seq := uint64(1); seq <= 3; seq++ {
			cp := loopCheckpoint("r", seq, loopPayload())
			cp.Values = map[string][]byte{"big": []byte(strings.Repeat("v", 100<<10) + string(rune('a'+seq)))}
			if err := s.Put(bg, cp, checkpoint.PutOptions{Sync: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
		slices.Sort(vlogs)
		return dir, vlogs[len(vlogs)-1]
	}
	memStore := func(t *testing.T) (dir, log string) {
		return killedStore(t, 4)
	}
	for _, c := range []struct {
		name  string
		store func(t *testing.T) (dir, log string)
		size  int64
	}{
		{"empty value log", vlogStore, 0},
		{"value log cut in its header", vlogStore, 10},
		{"empty memtable log", memStore, 0},
		{"memtable log cut in its header", memStore, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, log := c.store(t)
			if err := os.Truncate(log, c.size); err != nil {
				t.Fatal(err)
			}
			before := treeHash(t, dir)
			s, err := Open(dir, Options{})
			if err == nil {
				cp, lerr := s.Latest(bg, "r")
				s.Close()
				t.Fatalf("the store opened (latest %d, %v), want it refused as damaged", cp.Seq, lerr)
			}
			t.Logf("open: %v", err)
			if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(log)) || strings.Contains(err.Error(), "\n") {
				t.Errorf("open error %q, want one line saying the store is damaged and naming %s", err, filepath.Base(log))
			}
			if after := treeHash(t, dir); after != before {
				t.Error("the failed open changed the store's files")
			}
		})
	}
}
