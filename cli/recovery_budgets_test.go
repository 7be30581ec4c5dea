package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// commitConfig writes gaffer.yaml in dir and commits it.
func commitConfig(t *testing.T, dir, content string) {
	t.Helper()
	writeTestFile(t, filepath.Join(dir, "gaffer.yaml"), content)
	gitOut(t, dir, "add", "gaffer.yaml")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "config")
}

// runRefusesConfig commits config as gaffer.yaml in a recovery repository
// and runs its plan there: the run must exit 3 with one line that holds
// each of want. It returns the repository.
func runRefusesConfig(t *testing.T, config string, want ...string) string {
	t.Helper()
	dir, plan, sp := recoveryRepo(t, "developer: []\n")
	commitConfig(t, dir, config)
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve")
	ok := code == ExitInvalid && strings.Count(strings.TrimSpace(out), "\n") == 0
	for _, w := range want {
		ok = ok && strings.Contains(out, w)
	}
	if !ok {
		t.Fatalf("exit %d, want %d and one line holding %q:\n%s", code, ExitInvalid, want, out)
	}
	return dir
}

// A profile's recovery budget is the run's: with max_replans_per_run: 0
// the phase that fails twice alike is not replanned (the same run replans
// with the defaults: TestRecoveryIsVisibleAndAnswerable). The budget is
// stored with the run when it starts, so a resume after gaffer.yaml
// dropped it still allows no replan.
func TestRecoveryBudgetFromTheProfileIsTheRuns(t *testing.T) {
	t.Parallel()
	dir, plan, script := replanRepo(t, goodReplan)
	commitConfig(t, dir, "profiles:\n  default:\n    recovery: {max_replans_per_run: 0}\n")
	out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-budget")
	if code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d, want %d (awaiting the plan's approval)\n%s", code, ExitAwaitingApproval, out)
	}
	commitConfig(t, dir, "profiles:\n  default:\n    recovery: {max_replans_per_run: 5}\n")
	out, code = gaffer(t, "--repo", dir, "approve", "r-budget")
	if code == 0 || strings.Contains(out, "phase 2: replan") || !strings.Contains(out, "recovery, phase 2: stuck:stop") {
		t.Fatalf("approve: exit %d; want the run to stop at phase 2 without a replan (max_replans_per_run: 0 at its start)\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-budget")
	if v.Status != "halted" || v.Recovery == nil || v.Recovery.Replans != 0 || v.Recovery.Last == nil || v.Recovery.Last.Decision != "stuck:stop" {
		t.Fatalf("status %s recovery %+v, want halted without a replan", v.Status, v.Recovery)
	}
}
