package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The Doctor's execute_fix through the binary: its command runs once,
// before the retry, in the run's tree, without the API keys of gaffer's
// environment and with their values redacted from its output; the retry
// sees its file, and the decision records say what ran. A second
// execute_fix in the phase is refused (max_execute_fix_per_phase: 1).
func TestScriptedExecuteFix(t *testing.T) {
	t.Parallel()
	const secret = "sk-fixtest-0123456789"
	script := developerScript(passPhase1,
		session(2, "attempt: 1", failWith("./eval.go:3:9: undefined: parseOperand")),
		session(2, "attempt: 2", failWith("zz_generated.go: no such file or directory")),
		session(2, "attempt: 3", "run: 'cat zz_generated.txt'", writeImpl),
	) + roleAnswer("doctor", `'{"action":"execute_fix","confidence":0.9,"category":"build_error","rationale":"the generated file is missing","command":"echo generated > zz_generated.txt; echo key=[$OPENAI_API_KEY]; echo `+secret+`"}'`)
	dir, plan, sp := recoveryRepo(t, script)
	cmd := exec.Command(gafferBinary(t), "--repo", dir, "run", "--plan", plan, "--script", sp, "--auto-approve", "--run-id", "r-fix")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+secret)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil || !strings.Contains(out, "[developer p2 a3 i1] run cat zz_generated.txt") {
		t.Fatalf("run: %v; want attempt 3 to find the fix's file\n%s", err, out)
	}
	v := statusJSON(t, "--repo", dir, "r-fix")
	if v.Status != "completed" {
		t.Fatalf("status %s", v.Status)
	}
	all := decisionTrail(t, dir, runRev(t, dir), v.ExecDir)
	if !strings.Contains(all, "doctor:execute_fix@the generated file is missing") || !strings.Contains(all, "execute_fix:ran@echo generated > zz_generated.txt") ||
		!strings.Contains(all, "exit 0\ngenerated") && !strings.Contains(all, "exit 0\nkey=[]") {
		t.Fatalf("decision records:\n%s\nwant the Doctor's execute_fix and its run", all)
	}
	if !strings.Contains(all, "key=[]") || !strings.Contains(all, "[redacted OPENAI_API_KEY]") {
		t.Fatalf("decision records:\n%s\nwant the fix run without the key, and the key's value redacted", all)
	}
	for _, where := range []string{all, out, gitOut(t, dir, "log", "-p", "--all")} {
		if strings.Contains(where, secret) {
			t.Fatalf("the key's value leaked:\n%s", where)
		}
	}
	if gitOut(t, dir, "show", runRev(t, dir)+":zz_generated.txt") != "generated" {
		t.Fatal("phase 2's commit lacks the fix's file")
	}
}

// max_execute_fix_per_phase must be a whole number ≥ 0: exit 3, one
// line naming the key and the fix.
func TestExecuteFixCapBadValueExits3(t *testing.T) {
	t.Parallel()
	dir := runRefusesConfig(t, "profiles:\n  default:\n    recovery:\n      max_execute_fix_per_phase: -1\n",
		"gaffer.yaml:4: recovery.max_execute_fix_per_phase must not be negative, got -1 (0 or more; leave it out for the default 1)")
	out, code := bin(t, "--repo", dir, "config", "show")
	if code != ExitInvalid || !strings.Contains(out, "max_execute_fix_per_phase") {
		t.Fatalf("config show: exit %d\n%s", code, out)
	}
	commitConfig(t, dir, "profiles:\n  default:\n    recovery:\n      max_execute_fix_per_phase: 0\n")
	if out, code = bin(t, "--repo", dir, "config", "show"); code != 0 || !strings.Contains(out, "max_execute_fix_per_phase: 0") || !strings.Contains(out, "- execute_fix") {
		t.Fatalf("config show: exit %d\n%s", code, out)
	}
}
