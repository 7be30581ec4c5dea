package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/workspace"
)

// files is the demo project before the run: a Go module with only doc.go.
func files() map[string]string {
	return map[string]string{
		"go.mod":     "module example.com/calc\n\ngo 1.21\n",
		"doc.go":     "// Package calc evaluates expressions of the form \"a op b\".\npackage calc\n",
		".gitignore": "*.test\n",
		"README.md":  "# calc\n\nA tiny calculator, built phase by phase by gaffer's demo.\n",
	}
}

// epoch is the demo repository's first commit time: fixed, so every demo
// run makes the same commits.
func epoch() time.Time { return time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC) }

// DirError is a directory the demo repository cannot be created in: it
// holds one already (HoldsDemo), or something else.
type DirError struct {
	Dir       string
	HoldsDemo bool
}

func (e *DirError) Error() string {
	if e.HoldsDemo {
		return fmt.Sprintf("%s already holds a demo repository; continue its run with `gaffer resume --repo %s` or use another --dir", e.Dir, e.Dir)
	}
	return fmt.Sprintf("demo: %s is not empty; give an empty or new --dir", e.Dir)
}

// Setup creates the demo repository in dir (a new temporary directory
// when dir is "") and returns its absolute path: the files, one commit at
// a fixed time, and the script and plan under .git/gaffer-demo (outside
// the work tree). A dir that holds anything is a *DirError.
func Setup(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "gaffer-demo-")
		if err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	if _, err := os.Stat(filepath.Join(abs, ".git", "gaffer-demo", "script.yaml")); err == nil {
		return "", &DirError{Dir: abs, HoldsDemo: true}
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", &DirError{Dir: abs}
	}
	repo, err := workspace.Init(abs, "main")
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	for name, content := range files() {
		if err := workspace.WriteFileAtomic(filepath.Join(abs, name), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
	}
	author := workspace.Signature{Name: "gaffer demo", Email: "demo@gaffer.invalid"}
	if _, err := repo.Commit(ctx, "calc: an empty Go module", nil, workspace.CommitOptions{Author: author, When: epoch()}); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	sd := filepath.Join(abs, ".git", "gaffer-demo")
	for name, content := range map[string]string{"script.yaml": Script, "plan.md": Plan} {
		if err := workspace.WriteFileAtomic(filepath.Join(sd, name), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
	}
	return strings.TrimSuffix(abs, "/"), nil
}
