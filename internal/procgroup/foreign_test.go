package procgroup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// TestKillOrphansLeavesOtherFiles puts, in a registry's directory, files
// that are not records: a directory the user pointed it at by mistake (a
// symbolic link, DIR.groups beside a --store DIR of theirs) holds them.
// KillOrphans removed every file it could not parse; it must remove only
// records (files named by a group id, and their temporary files) and
// leave the rest.
func TestKillOrphansLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	keep := map[string]string{"notes.txt": "mine\n", "123abc": "x", "README": "readme\n", ".notes.txt" + atomicfile.TempMarker + "k3x": "x"}
	for name, content := range keep {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A record that cannot be parsed, and a leftover temporary file, are
	// the registry's own: they go.
	for _, name := range []string{"4242", "4243.tmp", ".4244" + atomicfile.TempMarker + "k3x"} {
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
	for _, name := range []string{"4242", "4243.tmp", ".4244" + atomicfile.TempMarker + "k3x"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("the registry's own file %s is still there (%v)", name, err)
		}
	}
}

// TestRecordRefusesASymlinkedDirectory points the registry's directory,
// by a symbolic link, at a directory of the user's (mode 0755). Record
// made it 0700 through the link and wrote records into it; it must refuse,
// leaving the directory as it was.
func TestRecordRefusesASymlinkedDirectory(t *testing.T) {
	target := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "store.groups")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startGroup(t)
	forget, err := Open(link).Record(cmd.Process.Pid)
	if err == nil {
		forget()
		t.Fatal("Record wrote into a directory reached by a symbolic link")
	}
	t.Logf("record: %v", err)
	info, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(target)
	if info.Mode().Perm() != 0o755 || len(entries) != 0 {
		t.Errorf("the link's target is now %v with %d files, want 0755 and empty", info.Mode().Perm(), len(entries))
	}
}
