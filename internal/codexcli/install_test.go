package codexcli

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GAFFER_CODEX_DIR": "/opt/cc", "HOME": "/h"}, "/opt/cc"},
		{map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/h"}, filepath.Join("/c", "gaffer", "codex-"+Version)},
		{map[string]string{"HOME": "/h"}, filepath.Join("/h", ".cache", "gaffer", "codex-"+Version)},
	}
	for _, c := range cases {
		got, err := Dir(func(k string) string { return c.env[k] })
		if err != nil || got != c.want {
			t.Errorf("Dir(%v) = %q, %v; want %q", c.env, got, err, c.want)
		}
	}
	if _, err := Dir(func(string) string { return "" }); err == nil {
		t.Error("Dir with no HOME did not fail")
	}
	if installed(t.TempDir()) {
		t.Error("an empty directory counts as installed")
	}
}
