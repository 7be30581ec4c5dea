package badger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// snapshotDir lists each file of dir with its size and mode.
func snapshotDir(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]os.FileInfo{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fi
	}
	return out
}

// TestDamagedVlogHeaderWritesNothing damages the header of a store's value
// log and opens it: the open is refused as damage, and the directory is
// as it was: no new memtable log (Badger made a 16 MiB 00001.mem before
// it read the value log), and every file is private (0600).
func TestDamagedVlogHeaderWritesNothing(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, 20)
	vlog := filepath.Join(dir, "000001.vlog")
	f, err := os.OpenFile(vlog, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xde, 0xad, 0xbe, 0xef}, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := snapshotDir(t, dir)
	s, err := Open(dir, Options{})
	if err == nil {
		s.Close()
		t.Fatal("opened a store whose value log header is damaged")
	}
	if !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Errorf("open: %v, want ErrCorrupt", err)
	}
	after := snapshotDir(t, dir)
	for name, fi := range after {
		b, ok := before[name]
		switch {
		case !ok:
			t.Errorf("the failed open made %s (%d bytes, %v)", name, fi.Size(), fi.Mode().Perm())
		case b.Size() != fi.Size() || !b.ModTime().Equal(fi.ModTime()):
			t.Errorf("the failed open changed %s", name)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("the failed open removed %s", name)
		}
	}
}
