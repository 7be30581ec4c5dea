package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store directory that holds something else, or a damaged store, stops
// every command with exit 8 and one line naming the directory and the fix,
// and nothing in it is changed.
func TestForeignAndDamagedStoresAreExit8(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	store := filepath.Join(dir, ".git", "gaffer")

	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(store, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := gaffer(t, "--repo", dir, "list")
	if code != ExitPrecondition || !strings.Contains(out, "not a gaffer store") || !strings.Contains(out, store) {
		t.Fatalf("foreign store: exit %d, %q; want exit %d naming %s", code, out, ExitPrecondition, store)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
		t.Fatalf("foreign store: notes.txt = %q, %v", b, err)
	}
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}

	// A real store, then one of its tables cut short.
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != ExitOK {
		t.Fatalf("run: exit %d", code)
	}
	tables, _ := filepath.Glob(filepath.Join(store, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no tables in the store after a run")
	}
	if err := os.Truncate(tables[0], 100); err != nil {
		t.Fatal(err)
	}
	out, code = gaffer(t, "--repo", dir, "status")
	if code != ExitPrecondition || !strings.Contains(out, "is damaged") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("damaged store: exit %d, %q; want exit %d and one line", code, out, ExitPrecondition)
	}
}
