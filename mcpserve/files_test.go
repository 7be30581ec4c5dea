package mcpserve

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWritePlan(t *testing.T) {
	store := filepath.Join(t.TempDir(), "gaffer")
	p, err := WritePlan(store, "r-1", "# Plan\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(store+".mcp", "r-1.md"); p != want {
		t.Errorf("WritePlan = %s, want %s", p, want)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "# Plan\n" {
		t.Errorf("plan file = %q, %v", b, err)
	}
	for path, want := range map[string]os.FileMode{p: 0o600, FilesDir(store): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, fi.Mode(), err, want)
		}
	}
	// A second plan of the run replaces the first whole.
	if _, err := WritePlan(store, "r-1", "# Other\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "# Other\n" {
		t.Errorf("rewritten plan file = %q", b)
	}
}
