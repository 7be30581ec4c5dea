package cli

import (
	"strings"
	"testing"
)

// A run that a recovery budget stopped says which budget and which
// gaffer.yaml key to raise: in the recovery line of the run's output,
// its halt message, and status's text and --json errors.
func TestRecoveryHaltNamesTheSpentBudget(t *testing.T) {
	t.Parallel()
	dir, plan, script := replanRepo(t, goodReplan)
	commitConfig(t, dir, "profiles:\n  default:\n    recovery: {max_replans_per_run: 0}\n")
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-spent", "--auto-approve")
	const why = "no recovery left: replans 0 of max_replans_per_run 0 (raise it under recovery: in gaffer.yaml)"
	if code == 0 || !strings.Contains(out, "recovery, phase 2: stuck:stop — "+why) || !strings.Contains(out, "; recovery: "+why) {
		t.Fatalf("run: exit %d; want the recovery line and the halt message to name max_replans_per_run\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-spent")
	if v.Status != "halted" || len(v.Errors) == 0 || !strings.HasSuffix(v.Errors[len(v.Errors)-1], "; recovery: "+why) {
		t.Fatalf("status --json: %s, errors %q; want the halt message to end with %q", v.Status, v.Errors, why)
	}
	if v.Recovery == nil || v.Recovery.Last == nil || v.Recovery.Last.Why != why {
		t.Fatalf("status --json recovery %+v, want the last decision's why %q", v.Recovery, why)
	}
	out, code = gaffer(t, "--repo", dir, "status", "r-spent")
	if code != 0 || !strings.Contains(out, "max_replans_per_run 0 (raise it under recovery: in gaffer.yaml)\n") {
		t.Fatalf("status: exit %d; want the error line to name max_replans_per_run\n%s", code, out)
	}
}
