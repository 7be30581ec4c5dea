package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/profile"
)

// TestGoalOverTheLimitIsRefusedUpFront gives the real binary a --goal one
// byte over 64 KiB: run and submit exit 3 with one line naming the limit,
// before anything is written (no store, no commit) or sent to a serve. A
// goal of exactly 64 KiB runs to the end.
func TestGoalOverTheLimitIsRefusedUpFront(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	head := gitOut(t, dir, "rev-parse", "HEAD")
	over := strings.Repeat("g", profile.MaxGoalBytes) + "!"
	const want = "gaffer: the goal is 65537 bytes, over the limit of 65536 (64 KiB); shorten it, or write the plan and give --plan FILE\n"
	for _, cmd := range []string{"run", "submit"} {
		out, code := gafferCmd(t, bin, "--repo", dir, cmd, "--goal", over, "--script", script, "--auto-approve")
		if code != ExitInvalid || out != want {
			t.Errorf("%s: exit %d, want %d and\n%s\ngot:\n%s", cmd, code, ExitInvalid, want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !os.IsNotExist(err) {
		t.Errorf("a refused goal wrote a store: %v", err)
	}
	if h := gitOut(t, dir, "rev-parse", "HEAD"); h != head {
		t.Errorf("HEAD moved from %s to %s", head, h)
	}

	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--goal", over[:profile.MaxGoalBytes], "--script", script, "--auto-approve")
	if code != ExitOK || strings.Contains(out, "the goal is") {
		t.Errorf("a goal at the limit: exit %d, want the run to complete\n%.2000s", code, out)
	}
}
