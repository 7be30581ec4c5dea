package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestOversizedPlanIsRefusedUpFront gives the real binary a 10 MB plan and
// a plan with too many tasks. `plan validate` and `run` both exit 3 with
// one line naming the limit, and `run` writes nothing: no store, no
// commit. Before the limits, the 10 MB plan passed validation and the run
// stopped at its second checkpoint, over the store's largest value, for
// good.
func TestOversizedPlanIsRefusedUpFront(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	head := gitOut(t, dir, "rev-parse", "HEAD")

	var big strings.Builder
	big.WriteString("# Big\n\n")
	for i := 1; big.Len() < 10<<20; i++ {
		fmt.Fprintf(&big, "### Task %d: part %d\n\n%s\n\n", i%900+1000*(i/900), i, strings.Repeat("words ", 5000))
	}
	var many strings.Builder
	for i := 1; i <= state.MaxTasks+1; i++ {
		fmt.Fprintf(&many, "### Task %d: step %d\n\n", i, i)
	}
	for _, tc := range []struct{ name, md, limit string }{
		{"10 MB", big.String(), "over the limit of 1048576 (1 MiB)"},
		{"too many tasks", many.String(), fmt.Sprintf("has %d tasks, over the limit of %d", state.MaxTasks+1, state.MaxTasks)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := filepath.Join(t.TempDir(), "plan.md")
			if err := os.WriteFile(plan, []byte(tc.md), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"plan", "validate", plan},
				{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"},
			} {
				out, code := gafferCmd(t, bin, args...)
				if code != ExitInvalid {
					t.Fatalf("%v: exit %d, want %d\n%s", args[len(args)-5:], code, ExitInvalid, out)
				}
				if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(out, tc.limit) || !strings.HasPrefix(out, plan+": ") {
					t.Fatalf("%v: want one line naming the limit (%q), got:\n%s", args[0], tc.limit, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !os.IsNotExist(err) {
				t.Errorf("run wrote a store: %v", err)
			}
			if h := gitOut(t, dir, "rev-parse", "HEAD"); h != head {
				t.Errorf("HEAD moved from %s to %s", head, h)
			}
		})
	}
}
