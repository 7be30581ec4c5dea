package npmpin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ErrNoNPM is returned by Install when the binary is not installed and npm
// is not in PATH.
var ErrNoNPM = errors.New("npm not found in PATH")

// Pin is one program pinned to one version.
type Pin struct {
	Title   string // the program's name for people: "Claude Code"
	Name    string // the install directory's prefix: "claude-code"
	Package string // the npm package: "@anthropic-ai/claude-code"
	Version string // the pinned version
	Bin     string // the binary npm links into node_modules/.bin: "claude"
	DirEnv  string // the variable that names the install directory
}

// Dir returns the install directory, using getenv for the environment.
func (p Pin) Dir(getenv func(string) string) (string, error) {
	if d := getenv(p.DirEnv); d != "" {
		return d, nil
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("%s: neither XDG_CACHE_HOME nor HOME is set; set %s", p.Name, p.DirEnv)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "gaffer", p.Name+"-"+p.Version), nil
}

// Binary returns the path of the program's binary under dir.
func (p Pin) Binary(dir string) string { return filepath.Join(dir, "node_modules", ".bin", p.Bin) }

// Install returns the path of the pinned binary, installing it into Dir
// with npm first when it is missing or another version. It returns an
// error matching ErrNoNPM when it would need npm and there is none.
func (p Pin) Install(ctx context.Context) (string, error) {
	dir, err := p.Dir(os.Getenv)
	if err != nil {
		return "", err
	}
	bin := p.Binary(dir)
	if p.installed(dir) {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%s: %w", p.Name, ErrNoNPM)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", p.Name, err)
	}
	spec := p.Package + "@" + p.Version
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", spec)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: npm install %s: %w: %s", p.Name, spec, err, strings.TrimSpace(string(out)))
	}
	if !p.installed(dir) {
		return "", fmt.Errorf("%s: npm installed %s but %s is missing or another version", p.Name, spec, bin)
	}
	return bin, nil
}

// installed reports whether dir holds the binary of the pinned version.
func (p Pin) installed(dir string) bool {
	if _, err := os.Stat(p.Binary(dir)); err != nil {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(p.Package), "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(data, &pkg) == nil && pkg.Version == p.Version
}

// ForTest returns the pinned binary for a test that drives the real
// program, installing it first when needed. It skips the test under
// -short, and when the binary is missing and npm is not in PATH to install
// it; any other install failure fails the test.
func (p Pin) ForTest(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("drives the real %s CLI; skipped in -short", p.Title)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := p.Install(ctx)
	if errors.Is(err, ErrNoNPM) {
		t.Skipf("%s %s is not installed and npm is not in PATH to install it", p.Title, p.Version)
	}
	if err != nil {
		t.Fatalf("installing %s: %v", p.Title, err)
	}
	return bin
}
