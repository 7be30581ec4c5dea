package cli

import (
	"strings"
	"testing"
)

// The Doctor's rollback_provider through the binary: the phase that
// failed twice is retried with roles.developer.escalation_model, the
// developer's other model, and status and the decision records say the
// run rolled back to it.
func TestScriptedRollbackProvider(t *testing.T) {
	t.Parallel()
	script := developerScript(passPhase1,
		session(2, "attempt: 1", failWith("provider error: 529 overloaded")),
		session(2, "attempt: 2", failWith("./eval.go:3:9: undefined: parseOperand")),
		session(2, "model: other-model", writeImpl),
	) + roleAnswer("doctor", `'{"action":"rollback_provider","confidence":0.9,"category":"build_error","rationale":"the model keeps failing"}'`)
	dir, plan, sp := recoveryRepo(t, script)
	commitConfig(t, dir, "profiles:\n  default:\n    roles:\n      developer: {escalation_model: other-model}\n")
	out, code := bin(t, "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-rb")
	if code != 0 || !strings.Contains(out, "[developer p2 a3 i1 other-model] write impl.txt") {
		t.Fatalf("run: exit %d; want attempt 3 run with other-model\n%s", code, out)
	}
	v := statusJSON(t, "--repo", dir, "r-rb")
	if v.Status != "completed" || v.Recovery == nil || v.Recovery.RolledBackTo != "other-model" {
		t.Fatalf("status %s recovery %+v; want the run rolled back to other-model", v.Status, v.Recovery)
	}
	if out, code := gaffer(t, "--repo", dir, "status", "r-rb"); code != 0 || !strings.Contains(out, "\nrecovery:  ") ||
		!strings.Contains(out, "developer rolled back to other-model") || !strings.Contains(out, "; last: ") {
		t.Fatalf("status: exit %d; want a recovery line naming the rollback\n%s", code, out)
	}
	all := decisionTrail(t, dir, runRev(t, dir), v.ExecDir)
	if !strings.Contains(all, "doctor:rollback_provider@the model keeps failing") || !strings.Contains(all, "rollback_provider@the Doctor: the model keeps failing") || !strings.Contains(all, "other-model from now on") {
		t.Fatalf("decision records:\n%s\nwant the Doctor's rollback_provider and the rollback to other-model", all)
	}
}

// A doctor_actions entry that is no optional action is a bad gaffer.yaml:
// exit 3, one line naming the key, the value and the choices.
func TestDoctorActionsBadValueExits3(t *testing.T) {
	t.Parallel()
	runRefusesConfig(t, "profiles:\n  default:\n    recovery:\n      doctor_actions: [reboot]\n",
		"gaffer.yaml:", `"reboot" is no optional action of the Doctor (want rollback_provider, execute_fix, skip_phase)`)
}
