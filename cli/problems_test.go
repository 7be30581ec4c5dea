package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 23 item 4: an invalid plan no longer hides the other problems of
// the call: each of the plan's lines and the unknown driver are listed,
// one a line, with the exit code of the first (usage), and nothing is
// written.
func TestInvalidPlanAndBadDriverAreAllListed(t *testing.T) {
	dir, _, _ := demoRepo(t)
	bad := filepath.Join(t.TempDir(), "bad.md")
	writeTestFile(t, bad, "# Plan\n\n## Phase 1\n### Task 1a: one\n**Type**: tset\nDo it.\n### Task 1b: two\n**Type**: imp\nDo it again.\n")
	problems := "  --driver \"bogus\": want script, llm or cli\n" +
		"  " + bad + ":5: task 1a: unknown type \"tset\" (want test, impl or refactor)\n" +
		"  " + bad + ":8: task 1b: unknown type \"imp\" (want test, impl or refactor)\n" +
		"Run 'gaffer run --help' for usage.\n"
	_, _, script := demoRepo(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"driver and plan", []string{"--driver", "bogus"}, ExitUsage, "gaffer: the run cannot start, 3 problems:\n" + problems},
		// A bad --pace is one more problem, listed first, not the only one.
		{"with --pace 1x", []string{"--driver", "bogus", "--pace", "1x"}, ExitUsage,
			"gaffer: the run cannot start, 4 problems:\n  --pace \"1x\": want a duration such as 500ms or 2s\n" + problems},
		// With a known driver the plan alone is still reported as its lines.
		{"plan alone", []string{"--script", script}, ExitInvalid,
			bad + ":5: task 1a: unknown type \"tset\" (want test, impl or refactor)\n" + bad + ":8: task 1b: unknown type \"imp\" (want test, impl or refactor)\n"},
	} {
		out, code := gaffer(t, append([]string{"--repo", dir, "run", "--plan", bad}, c.args...)...)
		if code != c.code || out != c.want {
			t.Errorf("%s: exit %d, output\n%s\nwant exit %d and\n%s", c.name, code, out, c.code, c.want)
		}
		noStore(t, dir)
	}
}

// Issue 23 item 8c: logs --phase N beyond the run's phases is refused as
// diff refuses it: exit 2 and one line naming the run's phase count.
func TestLogsAndDiffRefuseAPhaseBeyondTheRun(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-phases"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	const want = "gaffer: --phase 9: run r-phases has 4 phases\nRun 'gaffer %s --help' for usage.\n"
	for _, args := range [][]string{
		{"logs", "r-phases", "--phase", "9"},
		{"logs", "--phase", "9"},
		{"diff", "r-phases", "--phase", "9"},
	} {
		want := fmt.Sprintf(want, args[0])
		out, code := gaffer(t, append([]string{"--repo", dir}, args...)...)
		if code != ExitUsage || out != want {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", args, code, out, ExitUsage, want)
		}
	}
	// A phase the run has still prints its sessions.
	out, code := gaffer(t, "--repo", dir, "logs", "r-phases", "--phase", "4")
	if code != 0 || !strings.Contains(out, "phase 4") {
		t.Errorf("logs --phase 4: exit %d\n%s", code, out)
	}
}
