package cli

import (
	"strings"
	"testing"
)

// A replanner that fails spent the replan budget, but no replan happened:
// status --json counts it in replans_reserved, not in replans.
func TestStatusCountsOnlyReplansThatAnswered(t *testing.T) {
	t.Parallel()
	failing := strings.Replace(repeatedFailure, "answer: %s", "error: the model endpoint went away", 1)
	dir, plan, script := recoveryRepo(t, failing)
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-rep-0")
	if !strings.Contains(out, "recovery, phase 2: replan:no_revision — ") {
		t.Fatalf("run: exit %d, no replan:no_revision decision\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-rep-0")
	if v.Recovery == nil || v.Recovery.Replans != 0 || v.Recovery.ReplansReserved != 1 {
		t.Fatalf("status recovery %+v: want 0 replans, 1 reserved", v.Recovery)
	}
}
