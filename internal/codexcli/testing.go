package codexcli

import (
	"context"
	"errors"
	"testing"
	"time"
)

// ForTest returns the pinned Codex binary for a test that drives the
// real program, installing it first when needed. It skips the test under
// -short, and when the binary is missing and npm is not in PATH to install
// it; any other install failure fails the test.
func ForTest(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("drives the real Codex CLI; skipped in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := Install(ctx)
	if errors.Is(err, ErrNoNPM) {
		t.Skipf("Codex %s is not installed and npm is not in PATH to install it", Version)
	}
	if err != nil {
		t.Fatalf("installing Codex: %v", err)
	}
	return bin
}
