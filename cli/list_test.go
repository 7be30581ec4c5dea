package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// TestListShortensALongGoal: list prints a goal longer than 60 runes on
// one line under the run's row, after its branch, cut to 60 runes ending
// in "…" (counting runes, not bytes), on a terminal and off; list --json
// and status keep it whole.
func TestListShortensALongGoal(t *testing.T) {
	t.Parallel()
	dir, _, script := demoRepo(t)
	goal := "Teach the calculator to évaluate\tnested parentheses, unary minus and exponents without breaking Parse"
	plan := filepath.Join(t.TempDir(), "plan.md")
	writeTestFile(t, plan, strings.Replace(halfPlan, "two notes", goal, 1))
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-long"); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	const want = "  gaffer/r-long · Teach the calculator to évaluate nested parentheses, unary…\n"
	for name, list := range map[string]func(t *testing.T, args ...string) (string, int){
		"off a terminal": gaffer,
		"on a terminal":  func(t *testing.T, args ...string) (string, int) { return gafferTTY(t, "", args...) },
	} {
		out, code := list(t, "--repo", dir, "list")
		lines := strings.SplitAfter(out, "\n")
		if code != 0 || len(lines) != 4 || lines[2] != want {
			t.Errorf("list %s: exit %d, want the line under its row %q:\n%s", name, code, want, out)
		}
	}
	out, code := gaffer(t, "--repo", dir, "list", "--json")
	var vs []runview.Run
	if err := json.Unmarshal([]byte(out), &vs); code != 0 || err != nil || len(vs) != 1 || vs[0].Goal != goal {
		t.Fatalf("list --json: exit %d, %v, want the goal whole:\n%s", code, err, out)
	}
	if out, code := gaffer(t, "--repo", dir, "status"); code != ExitOK || !strings.Contains(out, "\ngoal:      "+goal+"\n") {
		t.Fatalf("status: exit %d, want the goal whole:\n%s", code, out)
	}
}
