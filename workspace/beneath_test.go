package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestWriteFileBeneath writes a new file through directories it makes,
// then over itself, with the mode given, and leaves no temporary file.
func TestWriteFileBeneath(t *testing.T) {
	root := t.TempDir()
	for _, content := range []string{"one\n", "two\n"} {
		if err := WriteFileBeneath(root, "docs/gaffer/x/phase-1/summary.md", []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, "docs", "gaffer", "x", "phase-1", "summary.md")
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Fatalf("summary.md = %q, %v; want %q", b, err, content)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, "docs", "gaffer", "x", "phase-1"))
	if len(entries) != 1 {
		t.Errorf("the directory holds %v, want summary.md alone", entries)
	}
	for _, bad := range []string{"", "/etc/passwd", "../x", "a/../b", "a//b", "./a"} {
		if err := WriteFileBeneath(root, bad, []byte("x"), 0o644); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("WriteFileBeneath(%q) = %v, want ErrUnsafePath", bad, err)
		}
	}
}

// TestWriteFileBeneathRefusesLinks is issue 30's attack on gaffer's
// writes: an agent makes phase-1, story, the execution directory itself,
// or the file gaffer writes, a symbolic link to a directory (or file) of
// the user's. Each write is refused with a *LinkError naming the link
// and its target, and nothing lands where the link points.
func TestWriteFileBeneathRefusesLinks(t *testing.T) {
	for _, c := range []struct{ link, write string }{
		{"docs/gaffer/x/phase-1", "docs/gaffer/x/phase-1/summary.md"},
		{"docs/gaffer/x/story", "docs/gaffer/x/story/001-developer-p1-a1.json"},
		{"docs/gaffer/x", "docs/gaffer/x/plan.md"},
		{"docs", "docs/gaffer/x/execution-state.json"},
		{"docs/gaffer/x/plan.md", "docs/gaffer/x/plan.md"},
	} {
		t.Run(c.link, func(t *testing.T) {
			root, target := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(filepath.FromSlash(c.link))), 0o755); err != nil {
				t.Fatal(err)
			}
			dst := target
			if filepath.Ext(c.link) == ".md" {
				dst = filepath.Join(target, "user-plan.md")
				if err := os.WriteFile(dst, []byte("the user's\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(dst, filepath.Join(root, filepath.FromSlash(c.link))); err != nil {
				t.Fatal(err)
			}
			err := WriteFileBeneath(root, c.write, []byte("gaffer's\n"), 0o644)
			var le *LinkError
			if !errors.Is(err, ErrLink) || !errors.As(err, &le) || le.Path != c.link || le.Target != dst {
				t.Fatalf("WriteFileBeneath = %v, want a *LinkError for %s -> %s", err, c.link, dst)
			}
			if err := CheckBeneath(root, c.write); !errors.Is(err, ErrLink) {
				t.Errorf("CheckBeneath = %v, want ErrLink", err)
			}
			left, _ := filepath.Glob(filepath.Join(target, "*"))
			if filepath.Ext(c.link) == ".md" {
				if b, _ := os.ReadFile(dst); string(b) != "the user's\n" {
					t.Errorf("the user's file is now %q", b)
				}
			} else if len(left) != 0 {
				t.Errorf("written through the link: %v", left)
			}
		})
	}
}

// TestWriteFileAtomicFollowsLinks shows the test above can fail: the
// plain write follows a planted phase-1 link.
func TestWriteFileAtomicFollowsLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	root, target := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, "x", "phase-1")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(root, "x", "phase-1", "summary.md"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "summary.md")); err != nil {
		t.Errorf("the plain write did not follow the link: %v", err)
	}
}

// TestReadFileBeneath reads a regular file, and refuses what an agent
// could plant where gaffer reads: a link (to a file of the user's), a
// directory,
// and a file over the bound; a missing file is fs.ErrNotExist. The
// named pipe is TestReadFileBeneathRefusesAPipe's.
func TestReadFileBeneath(t *testing.T) {
	root := t.TempDir()
	rel := "docs/gaffer/x/phase-1/review-feedback.md"
	if err := WriteFileBeneath(root, rel, []byte("# Phase 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileBeneath(root, rel, 1<<20); err != nil || string(b) != "# Phase 1\n" {
		t.Fatalf("ReadFileBeneath = %q, %v", b, err)
	}
	if _, err := ReadFileBeneath(root, rel, 3); err == nil {
		t.Error("a file over the bound was read")
	}
	if _, err := ReadFileBeneath(root, "docs/gaffer/x/phase-2/review-feedback.md", 1<<20); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadFileBeneath(root, "docs/gaffer/x/phase-1", 1<<20); err == nil {
		t.Error("a directory was read")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("the user's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, full); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileBeneath(root, rel, 1<<20); !errors.Is(err, ErrLink) {
		t.Errorf("through a link: %q, %v; want ErrLink", b, err)
	}
}
