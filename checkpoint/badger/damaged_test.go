package badger

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// captureOutput runs fn with os.Stdout and os.Stderr redirected to pipes and
// returns what was written to them.
func captureOutput(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, r); close(done) }()
	defer func() {
		os.Stdout, os.Stderr = stdout, stderr
	}()
	fn()
	os.Stdout, os.Stderr = stdout, stderr
	w.Close()
	<-done
	r.Close()
	return out.String()
}

// TestBadgerDamagedStoreSaysSoInOneLine damages a table file of a real store
// and opens it: the error is one line that names the store, says what is
// damaged and what to do, with one "checkpoint:" prefix, and nothing is
// printed to stdout or stderr.
func TestBadgerDamagedStoreSaysSoInOneLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(data []byte) []byte
		want   string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "truncated"},
		{"index byte flipped", func(b []byte) []byte {
			// The last byte of the index, just before its length and the checksum.
			chkLen := int(b[len(b)-1]) | int(b[len(b)-2])<<8
			b[len(b)-4-chkLen-4-1] ^= 0xff
			return b
		}, "checksum mismatch"},
		{"data byte flipped", func(b []byte) []byte { b[len(b)/4] ^= 0xff; return b }, "table 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fillStore(t, dir, 50)
			files, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(files) == 0 {
				t.Fatal("store has no table file")
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(files[0], tc.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			var s *Store
			printed := captureOutput(t, func() { s, err = Open(dir, Options{}) })
			if err == nil {
				s.Close()
				t.Fatal("a store with a damaged table opened")
			}
			if printed != "" {
				t.Errorf("opening printed:\n%s", printed)
			}
			msg := err.Error()
			t.Logf("open: %s", msg)
			if !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Errorf("error does not match ErrCorrupt")
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error has several lines:\n%s", msg)
			}
			if n := strings.Count(msg, "checkpoint:"); n != 1 {
				t.Errorf(`error says "checkpoint:" %d times`, n)
			}
			for _, want := range []string{"store " + dir + " is damaged", filepath.Base(files[0]), tc.want, "restore it from a backup or move it aside"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not say %q", want)
				}
			}
		})
	}
}
