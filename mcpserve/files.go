package mcpserve

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// FilesDir is the directory beside the store directory storeDir
// (STORE.mcp) where the server keeps what outlives it: the plans of the
// runs it starts (WritePlan) and the output of the gaffer processes it
// detaches.
func FilesDir(storeDir string) string { return storeDir + ".mcp" }

// WritePlan writes plan to the file a run it starts reads it from, a
// detached gaffer run or the serve it is queued in (FilesDir/ID.md, the
// user's only), and returns its path. The file is whole or absent.
func WritePlan(storeDir, id, plan string) (string, error) {
	dir := FilesDir(storeDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("gaffer mcp: %w", err)
	}
	p := filepath.Join(dir, id+".md")
	if err := atomicfile.WriteFile(p, []byte(plan), 0o600); err != nil {
		return "", fmt.Errorf("gaffer mcp: write the plan: %w", err)
	}
	return p, nil
}
