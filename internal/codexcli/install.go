package codexcli

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

// Version is the pinned Codex version. Versions change their tools
// and defaults from week to week; move the pin deliberately.
const Version = "0.171.0"

// Package is the npm package of Codex.
const Package = "@openai/codex"

// ErrNoNPM is returned by Install when the binary is not installed and npm
// is not in PATH.
var ErrNoNPM = errors.New("codexcli: npm not found in PATH")

// Dir returns the install directory for Version, using getenv for the
// environment.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv("GAFFER_CODEX_DIR"); d != "" {
		return d, nil
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("codexcli: neither XDG_CACHE_HOME nor HOME is set")
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "gaffer", "codex-"+Version), nil
}

// Binary returns the path of the codex binary under dir.
func Binary(dir string) string { return filepath.Join(dir, "node_modules", ".bin", "codex") }

// Install returns the path of the codex binary of Version, installing it
// into Dir with npm first when it is missing or another version. It
// returns ErrNoNPM when it would need npm and there is none.
func Install(ctx context.Context) (string, error) {
	dir, err := Dir(os.Getenv)
	if err != nil {
		return "", err
	}
	bin := Binary(dir)
	if installed(dir) {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", ErrNoNPM
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("codexcli: %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", Package+"@"+Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("codexcli: npm install %s@%s: %w: %s", Package, Version, err, strings.TrimSpace(string(out)))
	}
	if !installed(dir) {
		return "", fmt.Errorf("codexcli: npm installed %s@%s but %s is missing or another version", Package, Version, bin)
	}
	return bin, nil
}

// installed reports whether dir holds the binary of Version.
func installed(dir string) bool {
	if _, err := os.Stat(Binary(dir)); err != nil {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "@openai", "codex", "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(data, &pkg) == nil && pkg.Version == Version
}
