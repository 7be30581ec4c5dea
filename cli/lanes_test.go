package cli

import (
	"strings"
	"testing"
)

// Issue 31 item 5: a run says as it starts how a phase's lanes run, and
// where their work is combined: into the run's work tree, or in place
// into this checkout.
func TestRunSaysHowLanesRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "A phase's independent tasks run as lanes, up to 4 at once, each a fresh session in a private work tree under .git/gaffer-lanes; " +
			"their work is combined into the run's work tree as the phase's one commit."},
		{[]string{"--in-place", "--parallel", "1"}, "A phase's independent tasks run as lanes, one after another (--parallel 1), each a fresh session in a private work tree under .git/gaffer-lanes; " +
			"their work is combined into this checkout as the phase's one commit."},
	} {
		dir, plan, script := demoRepo(t)
		out, code := gaffer(t, append([]string{"--repo", dir, "run", "--plan", plan, "--script", script}, c.args...)...)
		if code != ExitAwaitingApproval {
			t.Fatalf("run %v: exit %d\n%s", c.args, code, out)
		}
		if got := lineWith(t, out, "run as lanes"); got != c.want {
			t.Errorf("run %v: lanes line\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	dir, plan, script := demoRepo(t)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--parallel", "-2")
	if code != ExitUsage || !strings.Contains(out, "parallel") || strings.Count(strings.TrimSpace(out), "\n") > 1 {
		t.Fatalf("--parallel -2: exit %d, want %d with one line naming parallel:\n%s", code, ExitUsage, out)
	}
}
