//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadFileBeneathRefusesAPipe: a named pipe planted where gaffer
// reads would block a plain read until something writes to it; it is
// refused at once instead.
func TestReadFileBeneathRefusesAPipe(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "review-feedback.md"), 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	if _, err := ReadFileBeneath(root, "review-feedback.md", 1<<20); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a named pipe: %v, want a refusal", err)
	}
}
