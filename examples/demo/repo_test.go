package demo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Setup makes the demo repository once: a directory that holds it is
// told as such, any other that is not empty as not empty, and neither is
// touched.
func TestSetupRefusesADirInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "calc")
	got, err := Setup(t.Context(), dir)
	if err != nil || got != dir {
		t.Fatalf("Setup(%s) = %q, %v", dir, got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer-demo", "plan.md")); err != nil {
		t.Errorf("the demo's plan: %v", err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir       string
		holdsDemo bool
	}{{dir, true}, {other, false}} {
		_, err := Setup(t.Context(), c.dir)
		var de *DirError
		if !errors.As(err, &de) || de.Dir != c.dir || de.HoldsDemo != c.holdsDemo {
			t.Errorf("Setup(%s) again = %v; want a DirError, HoldsDemo %v", c.dir, err, c.holdsDemo)
		}
	}
	if _, err := os.Stat(filepath.Join(other, ".git")); err == nil {
		t.Errorf("Setup made a repository in the non-empty %s", other)
	}
}
