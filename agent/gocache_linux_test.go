package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
)

// goCaches makes a Go module cache holding one extracted module (its
// directory 0555 and its file 0444, as the go command leaves them) and a
// build cache holding one entry, and returns their paths and the
// module's file.
func goCaches(t *testing.T) (build, mod, modFile string) {
	t.Helper()
	root := t.TempDir()
	build, mod = filepath.Join(root, "go-build"), filepath.Join(root, "mod")
	pkg := filepath.Join(mod, "example.com", "m@v1.0.0")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	modFile = filepath.Join(pkg, "m.go")
	if err := os.WriteFile(modFile, []byte("package m\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "entry"), []byte("cached\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pkg, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(pkg, 0o755) })
	return build, mod, modFile
}

// TestToolboxRunCannotChangeGoCaches is issue 30's attack on the module
// cache: a command rewrites an extracted module's source and a build
// cache entry, as an agent could to have a later `go build` outside
// gaffer compile its code. The command succeeds in its own view (the
// caches are layered for it, or are its own), and the user's caches are
// as they were.
func TestToolboxRunCannotChangeGoCaches(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	build, mod, modFile := goCaches(t)
	tb, _ := newTestToolbox(t, ToolboxOptions{Env: append(os.Environ(), "GOCACHE="+build, "GOMODCACHE="+mod)})
	res, err := tb.Run(context.Background(), `f="$GOMODCACHE/example.com/m@v1.0.0/m.go"
chmod u+w "$(dirname "$f")" "$f" 2>/dev/null; echo 'package m // evil' > "$f" && echo wrote-module
echo poisoned > "$GOCACHE/entry" && echo wrote-build-cache
echo caches: "$GOCACHE" "$GOMODCACHE"`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(mustRead(t, modFile)); got != "package m\n" {
		t.Errorf("the module's source in the user's cache is now %q\n%s", got, res.Output)
	}
	if got := string(mustRead(t, filepath.Join(build, "entry"))); got != "cached\n" {
		t.Errorf("the user's build cache entry is now %q\n%s", got, res.Output)
	}
	if tb.helper.Layered() {
		// Layered, the command saw its own writes at the caches' paths.
		if !strings.Contains(res.Output, "wrote-module") || !strings.Contains(res.Output, "wrote-build-cache") ||
			!strings.Contains(res.Output, "caches: "+build+" "+mod) {
			t.Errorf("the layered caches were not writable at their paths:\n%s", res.Output)
		}
	}
}

// TestToolboxRunChangesGoCachesWhenOff shows the test above can fail:
// with confinement off, the command's rewrite lands in the user's cache.
func TestToolboxRunChangesGoCachesWhenOff(t *testing.T) {
	build, mod, modFile := goCaches(t)
	tb, _ := newTestToolbox(t, ToolboxOptions{Confine: ConfineOff, Env: append(os.Environ(), "GOCACHE="+build, "GOMODCACHE="+mod)})
	if _, err := tb.Run(context.Background(), `f="$GOMODCACHE/example.com/m@v1.0.0/m.go"; chmod u+w "$(dirname "$f")" "$f"; echo 'package m // evil' > "$f"`, nil); err != nil {
		t.Fatal(err)
	}
	if got := string(mustRead(t, modFile)); !strings.Contains(got, "evil") {
		t.Errorf("unconfined, the rewrite did not land: %q", got)
	}
}

// TestToolboxRunBuildsWithLayeredCaches runs `go build` of a program
// that needs a module from the user's module cache, offline
// (GOPROXY=off): the layered caches hold what the build needs.
func TestToolboxRunBuildsWithLayeredCaches(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	if !tb.helper.Layered() {
		t.Skip("the Go caches are not layered here (no helper or no overlay)")
	}
	sum, err := os.ReadFile(filepath.Join("..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, "golang.org/x/sys ") {
			lines = append(lines, l)
		}
	}
	gomod := mustRead(t, filepath.Join("..", "go.mod"))
	var version string
	for _, l := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "golang.org/x/sys" {
			version = f[1]
		}
	}
	files := map[string]string{
		"go.mod":  "module example.com/p\n\ngo 1.22\n\nrequire golang.org/x/sys " + version + "\n",
		"go.sum":  strings.Join(lines, "\n") + "\n",
		"main.go": "package main\n\nimport \"golang.org/x/sys/unix\"\n\nfunc main() { println(unix.Getpid()) }\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tb.Run(context.Background(), "GOPROXY=off GOFLAGS=-mod=mod go build -o prog . && echo built", nil)
	if err != nil || res.Failed() || !strings.Contains(res.Output, "built") {
		t.Fatalf("go build: %v\n%s", err, res.Output)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestToolboxCommandsShareTheirCaches: what one command of a session
// writes into the Go caches (a build's output) the next command finds,
// so that it need not build it again, while the user's caches stay as
// they were; Close removes it.
func TestToolboxCommandsShareTheirCaches(t *testing.T) {
	if r, why := landlock.Available(); r == nil {
		t.Skip(why)
	}
	build, mod, _ := goCaches(t)
	tb, _ := newTestToolbox(t, ToolboxOptions{Env: append(os.Environ(), "GOCACHE="+build, "GOMODCACHE="+mod)})
	if res, err := tb.Run(context.Background(), `echo built > "$GOCACHE/new-entry"`, nil); err != nil || res.Failed() {
		t.Fatalf("first command: %v\n%s", err, res.Output)
	}
	res, err := tb.Run(context.Background(), `cat "$GOCACHE/new-entry"`, nil)
	if err != nil || res.Failed() || !strings.Contains(res.Output, "built") {
		t.Fatalf("the second command does not find the first's entry: %v\n%s", err, res.Output)
	}
	if _, err := os.Stat(filepath.Join(build, "new-entry")); err == nil {
		t.Errorf("the entry is in the user's build cache")
	}
	if tb.caches == nil {
		t.Fatal("no caches kept between the commands")
	}
	kept := tb.caches.Path
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); err == nil {
		t.Errorf("Close left %s", kept)
	}
}
