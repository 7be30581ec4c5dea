package workspace

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
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
	dir := ExecDir("2026-01-02", "GAF-7", "Add a cache")
	if dir != "docs/gaffer/2026-01-02-GAF-7-add-a-cache" {
		t.Fatalf("ExecDir = %q", dir)
	}
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

func TestExecDir(t *testing.T) {
	for _, tc := range []struct{ date, id, slug, want string }{
		{"2026-01-02", "42", "fix-login", "docs/gaffer/2026-01-02-42-fix-login"},
		{"2026-01-02", "", "fix-login", "docs/gaffer/2026-01-02-fix-login"},
		{"2026-01-02", "../../etc", "Fix Login!", "docs/gaffer/2026-01-02-etc-fix-login"},
		{"2026/01/02", "a b", "", "docs/gaffer/2026-01-02-a-b-run"},
	} {
		if got := ExecDir(tc.date, tc.id, tc.slug); got != tc.want {
			t.Errorf("ExecDir(%q, %q, %q) = %q, want %q", tc.date, tc.id, tc.slug, got, tc.want)
		}
	}
}

func TestSlugify(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Add a cache to the API", "add-a-cache-to-the-api"},
		{"  Réparer l'API — vite!  ", "reparer-l-api-vite"},
		{"", "run"},
		{"!!! ???", "run"},
		{"日本語", "run"},
		{"Straße über Ärger", "stra-e-uber-arger"},
		{"Implement the whole authentication flow with refresh tokens", "implement-the-whole-authentication-flow"},
		{strings.Repeat("x", 100), strings.Repeat("x", 40)},
		{"a " + strings.Repeat("y", 60), "a-" + strings.Repeat("y", 38)},
	} {
		if got := Slugify(tc.in); got != tc.want {
			t.Errorf("Slugify(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if utf8.RuneCountInString(foldFrom) != len(foldTo) {
		t.Fatal("fold table is misaligned")
	}
}

var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func FuzzSlugify(f *testing.F) {
	for _, s := range []string{"Add a cache", "", "Réparer", "--a--b--", strings.Repeat("ab ", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, goal string) {
		s := Slugify(goal)
		if len(s) == 0 || len(s) > maxSlug || !slugRE.MatchString(s) {
			t.Fatalf("Slugify(%q) = %q", goal, s)
		}
		if Slugify(s) != s {
			t.Fatalf("Slugify is not idempotent on %q", s)
		}
	})
}
