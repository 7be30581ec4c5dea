package cli

import (
	"strings"
	"testing"
)

// Torture: `approve --decision` on a run that is not waiting for
// recovery's question says what the run is doing, as plain approve does:
// a finished run has finished (exit 8), an unknown run is not found
// (exit 8), and only a run waiting for its plan's approval is told to be
// approved without --decision.
func TestApproveDecisionOnARunNotWaiting(t *testing.T) {
	t.Parallel()
	dir, plan, script := replanRepo(t, goodReplan)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-done"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	for _, d := range []string{"retry", "stop"} {
		out, code := gaffer(t, "--repo", dir, "approve", "r-done", "--decision", d)
		if code != ExitPrecondition || !strings.Contains(out, "has already finished") || strings.Contains(out, "plan's approval") {
			t.Fatalf("approve --decision %s on a completed run: exit %d\n%s", d, code, out)
		}
	}
	// Only a cancelled run takes a cancel as done already; a completed one refuses it.
	if out, code := gaffer(t, "--repo", dir, "cancel", "r-done"); code != ExitPrecondition || !strings.Contains(out, "has already finished: completed") {
		t.Fatalf("cancel of a completed run: exit %d\n%s", code, out)
	}
	out, code := gaffer(t, "--repo", dir, "approve", "r-none", "--decision", "retry")
	if code != ExitPrecondition || !strings.Contains(out, "no run r-none") {
		t.Fatalf("approve --decision on an unknown run: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-plan"); code != ExitAwaitingApproval {
		t.Fatalf("run without --auto-approve: exit %d\n%s", code, out)
	}
	if out, code := gaffer(t, "--repo", dir, "approve", "r-plan", "--decision", "stop"); code != ExitUsage || !strings.Contains(out, "plan's approval") {
		t.Fatalf("approve --decision on a run waiting for its plan: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir, "r-plan"); v.Status != "awaiting_approval" {
		t.Fatalf("a refused --decision changed the run: %s", v.Status)
	}
}
