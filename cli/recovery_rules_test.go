package cli

import (
	"strings"
	"testing"
)

// Seed 003's fatal error types through the binary (issue 37 item 6): a
// recovery.fatal rule in gaffer.yaml names a failure wrong_tech_stack;
// the run stops after that first attempt and waits for the human
// (exit 4), no replan made, and status names the type.
func TestRecoveryFatalErrorTypeWaitsForTheHuman(t *testing.T) {
	t.Parallel()
	script := developerScript(passPhase1,
		session(2, "attempt: 1", failWith("this repository is a Rails app; the plan assumes Django")),
	) + roleAnswer("replanner", `'{"approach":"port the views","tasks":[{"id":"2","title":"implement","type":"impl"}]}'`)
	dir, plan, scriptPath := recoveryRepo(t, script)
	commitConfig(t, dir, "profiles:\n  default:\n    recovery:\n      fatal: [{name: wrong_tech_stack, pattern: 'the plan assumes Django'}]\n")
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", scriptPath, "--run-id", "r-fatal", "--auto-approve")
	if code != 4 || !strings.Contains(out, "fatal error type wrong_tech_stack") || strings.Contains(out, "[replanner") {
		t.Fatalf("run: exit %d; want 4, waiting on the fatal error type, no replan\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-fatal")
	if v.Recovery == nil || v.Recovery.Last == nil || !strings.Contains(v.Recovery.Last.Why, "fatal error type wrong_tech_stack") {
		t.Fatalf("status --json recovery %+v", v.Recovery)
	}
}

// A risk category that is no category is refused when gaffer.yaml is
// read, with the key and the cause (exit 3).
func TestRecoveryRiskCategoryTypoIsRefused(t *testing.T) {
	t.Parallel()
	dir, plan, scriptPath := recoveryRepo(t, "developer: []\n")
	commitConfig(t, dir, "profiles:\n  default:\n    recovery:\n      high_risk_categories: [logic]\n")
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", scriptPath, "--run-id", "r-typo", "--auto-approve")
	if code != 3 || !strings.Contains(out, `high_risk_categories: "logic" is no failure category`) {
		t.Fatalf("run: exit %d; want 3 naming the key\n%s", code, out)
	}
}
