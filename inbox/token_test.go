package inbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got, err := ReadToken(write("good", "  abc123\n")); err != nil || got != "abc123" {
		t.Errorf("ReadToken(one token) = %q, %v; want abc123", got, err)
	}
	for name, body := range map[string]string{"empty": "\n", "two words": "abc def\n", "two lines": "abc\ndef\n"} {
		if got, err := ReadToken(write(name, body)); !errors.Is(err, ErrNotOneToken) || got != "" {
			t.Errorf("ReadToken(%s) = %q, %v; want ErrNotOneToken", name, got, err)
		}
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); err == nil || errors.Is(err, ErrNotOneToken) {
		t.Errorf("ReadToken(missing) = %v; want the read's error", err)
	}
	if _, err := ReadToken(dir); err == nil || errors.Is(err, ErrNotOneToken) {
		t.Errorf("ReadToken(a directory) = %v; want the read's error", err)
	}
}
