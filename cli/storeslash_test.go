package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStorePathWithTrailingSlash gives --store as DIR/ (as a shell's
// completion writes it). The agents' group records and transcripts, kept
// beside the store as DIR.groups and DIR.logs, went inside it as DIR/.groups
// and DIR/.logs, and every later command refused the store as "not a
// gaffer store" — with agents a killed run left alive that nothing could
// then end. The store must hold Badger's files only, and open again with
// or without the slash.
func TestStorePathWithTrailingSlash(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	repo, plan, script := oneCommandRepo(t)
	store := filepath.Join(t.TempDir(), "store")
	if out, code := gafferCmd(t, bin, "--repo", repo, "--store", store+"/", "run", "--plan", plan, "--script", script,
		"--auto-approve", "--run-id", "r-20260101-slash1"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	entries, err := os.ReadDir(store)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			t.Errorf("the store holds a directory %s", e.Name())
		}
	}
	for _, s := range []string{store, store + "/"} {
		if out, code := gafferCmd(t, bin, "--repo", repo, "--store", s, "status"); code != 0 {
			t.Errorf("status --store %s: exit %d\n%s", s, code, out)
		}
	}
}
