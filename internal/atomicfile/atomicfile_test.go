package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFileReplacesWithExactMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "journal.json")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o666); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "two" {
		t.Errorf("content = %q, want two", got)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o666 {
		t.Errorf("mode = %v, want 0666 exactly (no umask)", fi.Mode().Perm())
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want the file alone", got)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// The crash-safety order: the temporary file holds the whole new content
// and is fsynced while the target still has the old one; the directory is
// fsynced after the rename, before WriteFile returns.
func TestWriteFileSyncsFileBeforeRenameAndDirectoryAfter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []string
	syncFile := func(f *os.File) error {
		if !IsTemp(f.Name()) || filepath.Dir(f.Name()) != dir {
			t.Errorf("synced %s, want a temporary file beside the target", f.Name())
		}
		if got := readFile(t, f.Name()); got != "new" {
			t.Errorf("temporary file at its sync = %q, want the whole new content", got)
		}
		if got := readFile(t, p); got != "old" {
			t.Errorf("target at the file sync = %q, want still old", got)
		}
		steps = append(steps, "file")
		return f.Sync()
	}
	syncDir := func(d string) error {
		if d != dir {
			t.Errorf("synced directory %s, want %s", d, dir)
		}
		if got := readFile(t, p); got != "new" {
			t.Errorf("target at the directory sync = %q, want new (renamed)", got)
		}
		steps = append(steps, "dir")
		return SyncDir(d)
	}
	if err := write(p, []byte("new"), 0o644, syncFile, syncDir); err != nil {
		t.Fatal(err)
	}
	if strings.Join(steps, ",") != "file,dir" {
		t.Errorf("syncs = %v, want file then directory", steps)
	}

	// A failed file sync leaves the target as it was and no temporary file.
	boom := errors.New("disk gone")
	err := write(p, []byte("lost"), 0o644, func(*os.File) error { return boom }, SyncDir)
	if !errors.Is(err, boom) {
		t.Fatalf("write with a failing sync: %v, want it wrapped", err)
	}
	if got := readFile(t, p); got != "new" {
		t.Errorf("target after a failed write = %q, want new", got)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("directory after a failed write holds %v, want the target alone", got)
	}
}

func TestTempNames(t *testing.T) {
	dir := t.TempDir()
	for _, target := range []string{"plan.md", ".hidden", "4242"} {
		f, err := CreateTemp(filepath.Join(dir, target), 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		base := filepath.Base(f.Name())
		if !strings.HasPrefix(base, "."+target+TempMarker) {
			t.Errorf("temporary name %s, want .%s%s…", base, target, TempMarker)
		}
		if got, ok := TempTarget(f.Name()); !ok || got != target {
			t.Errorf("TempTarget(%s) = %q, %v; want %q", base, got, ok, target)
		}
	}
	for _, user := range []string{"plan.md", ".hidden", "a.gaffer-tmp-1", "notes.tmp", "4243.tmp"} {
		if IsTemp(user) {
			t.Errorf("IsTemp(%q) = true for a name CreateTemp never makes", user)
		}
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "store.serve.json")
	var theirs []string
	for _, target := range []string{"store.serve.json", "store.serve.json", "other.json"} {
		f, err := CreateTemp(filepath.Join(dir, target), 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if target != "store.serve.json" {
			theirs = append(theirs, filepath.Base(f.Name()))
		}
	}
	for _, user := range []string{"store.serve.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, user), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := RemoveTemps(p)
	if err != nil || n != 2 {
		t.Fatalf("RemoveTemps = %d, %v; want 2", n, err)
	}
	want := append([]string{"notes.txt", "store.serve.json"}, theirs...)
	got := names(t, dir)
	if len(got) != len(want) {
		t.Errorf("left %v, want %v", got, want)
	}
	for _, w := range want {
		if _, err := os.Stat(filepath.Join(dir, w)); err != nil {
			t.Errorf("%s was removed: %v", w, err)
		}
	}
}

const writerEnv = "GAFFER_ATOMICFILE_WRITER"

// content is version v (0 or 1) of the file the killed writer replaces:
// big enough that a write is caught half done when nothing guards it.
func content(v int) []byte {
	return bytes.Repeat([]byte{"ab"[v]}, 1<<20)
}

// TestMain lets the test binary act as a writer that replaces a file in a
// loop until it is killed.
func TestMain(m *testing.M) {
	if p := os.Getenv(writerEnv); p != "" {
		for i := 0; ; i++ {
			if err := WriteFile(p, content(i%2), 0o644); err != nil {
				os.Stderr.WriteString(err.Error() + "\n")
				os.Exit(3)
			}
			os.Stdout.WriteString("wrote\n")
		}
	}
	os.Exit(m.Run())
}

// A writer killed with SIGKILL at any point leaves the old content or the
// new one, whole; its leftover temporary file, if any, is recognised and
// removed.
func TestKilledWriterLeavesOldOrNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+p)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		for range 3 + round*2 {
			if !lines.Scan() {
				cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("writer stopped early: %v", lines.Err())
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, content(0)) && !bytes.Equal(b, content(1)) {
			t.Fatalf("round %d: file after kill -9 is neither version whole (%d bytes)", round, len(b))
		}
		if _, err := RemoveTemps(p); err != nil {
			t.Fatal(err)
		}
		if got := names(t, dir); len(got) != 1 {
			t.Fatalf("round %d: after RemoveTemps the directory holds %v", round, got)
		}
	}
}
