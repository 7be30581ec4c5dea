package npmpin

import (
	"os"
	"path/filepath"
	"testing"
)

var testPin = Pin{Title: "Tool", Name: "tool", Package: "@acme/tool", Version: "1.2.3", Bin: "tool", DirEnv: "GAFFER_TOOL_DIR"}

func TestDir(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GAFFER_TOOL_DIR": "/opt/t", "HOME": "/h"}, "/opt/t"},
		{map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/h"}, filepath.Join("/c", "gaffer", "tool-1.2.3")},
		{map[string]string{"HOME": "/h"}, filepath.Join("/h", ".cache", "gaffer", "tool-1.2.3")},
	}
	for _, c := range cases {
		got, err := testPin.Dir(func(k string) string { return c.env[k] })
		if err != nil || got != c.want {
			t.Errorf("Dir(%v) = %q, %v; want %q", c.env, got, err, c.want)
		}
	}
	if _, err := testPin.Dir(func(string) string { return "" }); err == nil {
		t.Error("Dir with no HOME did not fail")
	}
}

// TestInstalledNeedsTheBinaryOfThePinnedVersion lays out what npm installs
// and checks that only the binary with the pinned version's package.json
// counts.
func TestInstalledNeedsTheBinaryOfThePinnedVersion(t *testing.T) {
	dir := t.TempDir()
	if testPin.installed(dir) {
		t.Error("an empty directory counts as installed")
	}
	bin := testPin.Binary(dir)
	pkg := filepath.Join(dir, "node_modules", "@acme", "tool", "package.json")
	for _, f := range []string{bin, pkg} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]bool{"1.2.2": false, "1.2.3": true} {
		if err := os.WriteFile(pkg, []byte(`{"name": "@acme/tool", "version": "`+version+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := testPin.installed(dir); got != want {
			t.Errorf("package.json of %s: installed = %v, want %v", version, got, want)
		}
	}
}
