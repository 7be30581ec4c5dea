package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "docs", "gaffer", "run", "execution-state.json")
	if err := WriteFileAtomic(p, []byte(`{"v":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte(`{"v":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != `{"v":2}` {
		t.Fatalf("content = %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("perm = %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("leftovers beside the file: %v", entries)
	}
}

func TestWriteFileAtomicCleansUpOnError(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "plan.md")
	if err := os.Mkdir(target, 0o755); err != nil { // a directory is in the way
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("x"), 0o644); err == nil {
		t.Fatal("WriteFileAtomic over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "plan.md" {
		t.Fatalf("temp file left behind: %v", entries)
	}
	// A parent that is a file cannot be created.
	if err := WriteFileAtomic(filepath.Join(dir, "plan.md", "x", "y"), nil, 0o644); err != nil {
		t.Fatalf("nested write under an existing directory: %v", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(file, "x"), nil, 0o644); err == nil {
		t.Fatal("write under a file succeeded")
	}
}

func TestExecFilesAreCommittedAndSurviveResets(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	pre := f.commit("base")
	dir := "docs/gaffer/2026-01-02-GAF-7-add-a-cache" // state.ExecDir("2026-01-02", "GAF-7", "Add a cache")
	plan := filepath.Join(f.dir, filepath.FromSlash(dir), "plan.md")
	if err := WriteFileAtomic(plan, []byte("# plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.commit("phase 1")
	if got := f.git("show", "HEAD:"+dir+"/plan.md"); got != "# plan\n" {
		t.Fatalf("committed plan = %q", got)
	}
	if err := f.repo.ResetTo(f.ctx, pre, nil); err != nil {
		t.Fatal(err)
	}
	if f.exists(dir) || f.exists("docs") {
		t.Fatal("the execution directory of an undone phase survived")
	}
}
