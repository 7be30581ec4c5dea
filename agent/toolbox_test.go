package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// newTestToolbox returns a Toolbox on a fresh directory, and the directory.
func newTestToolbox(t *testing.T, opts ToolboxOptions) (*Toolbox, string) {
	t.Helper()
	dir := t.TempDir()
	tb, err := NewToolbox(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	return tb, dir
}

func TestToolboxFiles(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	if err := tb.Write("internal/x/calc.go", "package x\n\nfunc Add(a, b int) int { return a + b }\n"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Edit("internal/x/calc.go", "a + b", "a - b"); err != nil {
		t.Fatal(err)
	}
	if got, err := tb.Read("internal/x/calc.go"); err != nil || !strings.Contains(got, "return a - b") {
		t.Errorf("Read = %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tb.Write("run.sh", "#!/bin/sh\necho hi\n"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "run.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("write changed the mode to %v", fi.Mode().Perm())
	}
	if err := tb.Mkdir("a/b/c"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Mkdir("a/b/c"); err != nil {
		t.Errorf("Mkdir of an existing directory: %v", err)
	}
	if err := tb.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a still exists: %v", err)
	}
	if err := tb.Delete("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Delete of a missing path = %v, want ErrNotExist", err)
	}
	if err := tb.Delete("."); err == nil {
		t.Error("Delete(\".\") succeeded")
	}
	if err := tb.Write("internal", "x"); err == nil {
		t.Error("Write over a directory succeeded")
	}
}

func TestToolboxEditFailures(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	const content = "a + b\nc + d\na + b\n"
	if err := tb.Write("f.go", content); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		old  string
		is   error
		text string
	}{
		{"x * y", ErrEditNotFound, "not in the file"},
		{"a + b", ErrEditAmbiguous, "occurs 2 times"},
	}
	for _, tt := range tests {
		err := tb.Edit("f.go", tt.old, "z")
		var te *ToolError
		if !errors.Is(err, tt.is) || !errors.As(err, &te) || te.Op != "edit" || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("Edit(%q) = %v, want %v mentioning %q", tt.old, err, tt.is, tt.text)
		}
	}
	if err := tb.Edit("f.go", "", "z"); err == nil {
		t.Error("Edit with empty old text succeeded")
	}
	if err := tb.Edit("missing.go", "a", "b"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Edit of a missing file = %v", err)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, "f.go")); got != content {
		t.Errorf("a failed edit changed the file: %q", got)
	}
}

func TestToolboxRefusesEscapes(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, link := range []struct{ name, target string }{
		{"out", outside},                                // a directory link leading out
		{"secret-link", secret},                         // a file link leading out
		{"dangling", filepath.Join(outside, "new.txt")}, // a link to a file that does not exist yet
		{"in", "sub"},                                   // a link that stays inside: fine
	} {
		if err := os.Symlink(link.target, filepath.Join(dir, link.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	escapes := []string{"../x", "a/../../x", "/etc/passwd", secret, "out/x.txt", "out/secret.txt", "secret-link", "dangling", "out"}
	for _, p := range escapes {
		for name, op := range map[string]func() error{
			"write": func() error { return tb.Write(p, "pwned") },
			"edit":  func() error { return tb.Edit(p, "secret", "pwned") },
			"read":  func() error { _, err := tb.Read(p); return err },
			"mkdir": func() error { return tb.Mkdir(filepath.Join(p, "d")) },
		} {
			if err := op(); !errors.Is(err, ErrPathEscape) {
				t.Errorf("%s %q = %v, want ErrPathEscape", name, p, err)
			}
		}
	}
	for _, p := range []string{"../x", "/etc/passwd", "out/secret.txt"} {
		if err := tb.Delete(p); !errors.Is(err, ErrPathEscape) {
			t.Errorf("delete %q = %v, want ErrPathEscape", p, err)
		}
	}
	if got := testkit.ReadFile(t, secret); got != "secret" {
		t.Fatalf("the outside file was changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(outside, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file was created outside through the dangling link")
	}
	// Deleting a link removes the link, never what it points to.
	if err := tb.Delete("secret-link"); err != nil {
		t.Fatal(err)
	}
	if got := testkit.ReadFile(t, secret); got != "secret" {
		t.Fatalf("deleting the link touched its target: %q", got)
	}
	// Links that stay inside work.
	if err := tb.Write("in/ok.txt", "ok"); err != nil {
		t.Errorf("write through an inner link: %v", err)
	}
	if got := testkit.ReadFile(t, filepath.Join(dir, "sub", "ok.txt")); got != "ok" {
		t.Errorf("inner link: got %q", got)
	}
}

func TestToolboxProtectsGit(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	if err := os.MkdirAll(filepath.Join(dir, ".git", "gaffer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		tb.Write(".git/hooks/pre-commit", "x"),
		tb.Delete(".git/gaffer"),
		tb.Delete(".git"),
		tb.Edit("sub/../.git/HEAD", "main", "evil"),
		tb.Mkdir(".git/x"),
	} {
		if !errors.Is(err, ErrProtectedPath) {
			t.Errorf("err = %v, want ErrProtectedPath", err)
		}
	}
	if _, err := tb.Read(".git/HEAD"); err != nil {
		t.Errorf("reading .git: %v", err)
	}
}

func TestToolboxRun(t *testing.T) {
	t.Setenv("FOO_API_KEY", "sk-foo-secret")
	t.Setenv("GH_TOKEN", "gh-secret")
	t.Setenv("Db_Password", "pw-secret")
	t.Setenv("GAFFER_TEST_PLAIN", "visible")
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	var echo strings.Builder
	res, err := tb.Run(context.Background(), "env; pwd", &echo)
	if err != nil || res.Failed() {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for _, secret := range []string{"FOO_API_KEY", "sk-foo-secret", "GH_TOKEN", "gh-secret", "pw-secret"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("the command saw %s", secret)
		}
	}
	if !strings.Contains(res.Output, "GAFFER_TEST_PLAIN=visible") {
		t.Error("ordinary variables are missing")
	}
	if !strings.Contains(res.Output, tb.Root()) {
		t.Errorf("not run in %s:\n%s", dir, res.Output)
	}
	if echo.String() != res.Output {
		t.Error("echo differs from the captured output")
	}

	res, err = tb.Run(context.Background(), "echo out; echo err >&2; exit 3", nil)
	if err != nil || res.ExitCode != 3 || !res.Failed() || !strings.Contains(res.Output, "out") || !strings.Contains(res.Output, "err") {
		t.Errorf("failing command: %+v, %v", res, err)
	}
}

func TestToolboxRunTimeoutKillsGroup(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{CommandTimeout: 200 * time.Millisecond})
	// The child keeps the output pipe open; only killing the group ends it.
	res, err := tb.Run(context.Background(), "sleep 30 & sleep 30", nil)
	if err != nil || !res.TimedOut || !res.Failed() || !strings.Contains(res.Output, "killed") {
		t.Errorf("Run = %+v, %v; want a timeout", res, err)
	}
}

func TestToolboxRunCancelled(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := tb.Run(ctx, "sleep 30", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled ctx = %v, want context.Canceled", err)
	}
}

func TestToolboxRunOutputCap(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{MaxOutput: 400})
	res, err := tb.Run(context.Background(), "echo FIRST; i=0; while [ $i -lt 500 ]; do echo line $i; i=$((i+1)); done; echo LAST", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Output, "FIRST") || !strings.HasSuffix(res.Output, "LAST\n") || !strings.Contains(res.Output, "bytes of output left out") {
		t.Errorf("capped output:\n%s", res.Output)
	}
	if len(res.Output) > 500 {
		t.Errorf("capped output is %d bytes", len(res.Output))
	}
}

func TestCapWriter(t *testing.T) {
	w := newCapWriter(8)
	for _, s := range []string{"ab", "cdef", "gh"} {
		_, _ = w.Write([]byte(s))
	}
	if got := w.String(); got != "abcdefgh" {
		t.Errorf("under the cap: %q", got)
	}
	_, _ = w.Write([]byte("ijklmnopqrstuvwxyz"))
	if got := w.String(); !strings.HasPrefix(got, "ab") || !strings.HasSuffix(got, "uvwxyz") || !strings.Contains(got, "18 bytes") {
		t.Errorf("over the cap: %q", got)
	}
}

func TestSecretNames(t *testing.T) {
	for name, secret := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true, "GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true,
		"db_password": true, "TOKEN": true, "PATH": false, "HOME": false, "TOKENIZER": false, "GOFLAGS": false,
	} {
		if isSecretName(name) != secret {
			t.Errorf("isSecretName(%q) = %v", name, !secret)
		}
	}
}
