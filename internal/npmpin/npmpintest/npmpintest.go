package npmpintest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/npmpin"
)

// ForTest returns p's pinned binary for a test that drives the real
// program, installing it first when needed. It skips the test under
// -short, and when the binary is missing and npm is not in PATH to install
// it; any other install failure fails the test.
func ForTest(t testing.TB, p npmpin.Pin) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("drives the real %s CLI; skipped in -short", p.Title)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := p.Install(ctx)
	if errors.Is(err, npmpin.ErrNoNPM) {
		t.Skipf("%s %s is not installed and npm is not in PATH to install it", p.Title, p.Version)
	}
	if err != nil {
		t.Fatalf("installing %s: %v", p.Title, err)
	}
	return bin
}
