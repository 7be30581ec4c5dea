package procgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKillOrphansLeavesOtherFiles puts, in a registry's directory, files
// that are not records: a directory the user pointed it at by mistake (a
// symbolic link, DIR.groups beside a --store DIR of theirs) holds them.
// KillOrphans removed every file it could not parse; it must remove only
// records (files named by a group id, and their temporary files) and
// leave the rest.
func TestKillOrphansLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	keep := map[string]string{"notes.txt": "mine\n", "123abc": "x", "README": "readme\n"}
	for name, content := range keep {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A record that cannot be parsed, and a leftover temporary file, are
	// the registry's own: they go.
	for _, name := range []string{"4242", "4243.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir).KillOrphans(); err != nil {
		t.Fatal(err)
	}
	for name := range keep {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s, not a record, was removed: %v", name, err)
		}
	}
	for _, name := range []string{"4242", "4243.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("the registry's own file %s is still there (%v)", name, err)
		}
	}
}
