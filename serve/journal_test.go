package serve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// A serve killed while replacing its journal leaves a temporary file
// beside it: atomicfile's, or PATH.tmp from versions before it. Reading
// the journal removes both and keeps the journal, and other files beside
// it, as they were.
func TestReadJournalRemovesLeftoverTemps(t *testing.T) {
	dir := t.TempDir()
	path := JournalPath(filepath.Join(dir, "store"))
	var j journal
	j.Queued = []Job{{RunID: "r-1", Kind: JobStart, Key: "/repo"}}
	if err := writeJournal(path, j); err != nil {
		t.Fatal(err)
	}
	f, err := atomicfile.CreateTemp(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"version":`)
	f.Close()
	leftovers := []string{f.Name(), path + ".tmp"}
	if err := os.WriteFile(path+".tmp", []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Queued) != 1 || got.Queued[0].RunID != "r-1" {
		t.Fatalf("journal = %+v, want r-1 queued", got.Queued)
	}
	for _, p := range leftovers {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("leftover %s is still there (%v)", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file of the user's was removed: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("journal %v, %v; want mode 0600", fi, err)
	}
}
