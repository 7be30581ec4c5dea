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
