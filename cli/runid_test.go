package cli

import (
	"strings"
	"testing"
)

// TestBadRunIDIsRefusedByEveryCommand: "..", "." and "../../x" are not run
// ids; every command that takes RUN refuses them with exit 2 and one line,
// before reading anything (logs used to read the directories above the
// transcripts' folder and exit 0).
func TestBadRunIDIsRefusedByEveryCommand(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	cmds := [][]string{{"logs"}, {"status"}, {"history"}, {"diff"}, {"cancel"}, {"resume"}, {"approve"}, {"reject"},
		{"plan", "show"}, {"delete", "--yes"}, {"fork", "--from", "1"}}
	for _, id := range []string{"..", ".", "../../x"} {
		for _, cmd := range cmds {
			args := append(append([]string{"--repo", dir}, cmd...), id)
			out, code := gaffer(t, args...)
			if code != ExitUsage || !strings.Contains(out, "not a run id") || !strings.HasPrefix(out, "gaffer: not a run id: ") {
				t.Errorf("gaffer %s: exit %d, want %d and a line naming the bad run id:\n%s", strings.Join(args[2:], " "), code, ExitUsage, out)
			}
		}
	}
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "../x")
	if code != ExitUsage || !strings.Contains(out, "not a run id") {
		t.Errorf("run --run-id ../x: exit %d, want %d:\n%s", code, ExitUsage, out)
	}
}
