package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
)

// retryWithHintScript fails phase 2's first two attempts differently; the
// Doctor advises retry_with_hint, and the third attempt passes.
var retryWithHintScript = developerScript(passPhase1,
	session(2, "attempt: 1", failWith("the parser rejects the input")),
	session(2, "attempt: 2", failWith("a different failure, somewhere else in the evaluator entirely")),
	session(2, "attempt: 3", writeImpl),
) + roleAnswer("doctor", `'{"action":"retry_with_hint","confidence":0.9,"category":"agent_gave_up","rationale":"the evaluator is missing a case","hint":"handle the empty input"}'`)

// doctorScript is retryWithHintScript with the Doctor's call's usage.
var doctorScript = retryWithHintScript + "    usage: {input_tokens: 7, output_tokens: 3}\n"

// waitLine waits until the process printed line (pollOutput).
func (p *proc) waitLine(line string) bool {
	_, ok := p.pollOutput(func(out string) bool { return strings.Contains(out, line+"\n") })
	return ok
}

// Proof 12: SIGKILL right after the Doctor's answer is checkpointed: the
// Doctor is not called again. SIGKILL during the call: it is called
// exactly once more. Either way the counters count one call, and the
// retried phase's work is committed. In place and in the run's own
// work tree (whose branch holds the result; the checkout stays as it was).
func TestRecoveryDoctorCallSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	for _, c := range []struct {
		name, killIn string
		callsAfter   int // Doctor sessions the resumed process makes
		m            runMode
	}{
		{"after the answer's checkpoint", "developer/2/3", 0, runModes[0]},
		{"during the call", "doctor/2/2", 1, runModes[0]},
		{"after the answer's checkpoint, own work tree", "developer/2/3", 0, runModes[1]},
		{"during the call, own work tree", "doctor/2/2", 1, runModes[1]},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, plan, script := recoveryRepo(t, doctorScript)
			untouched := c.m.untouched(t, dir)
			p := startProc(t, bin, c.m.args("--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-kill"),
				"GAFFER_TEST_PAUSE_SESSION="+c.killIn)
			if !p.waitLine("gaffer-test: session " + c.killIn) {
				out, code := p.wait()
				t.Fatalf("never reached %s (exit %d)\n%s", c.killIn, code, out)
			}
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil || exited(p) {
				t.Fatalf("kill: %v", err)
			}
			first, _ := p.wait()
			if n := strings.Count(first, "gaffer-test: session doctor/"); n != 1 {
				t.Fatalf("the killed process made %d Doctor calls, want 1\n%s", n, first)
			}
			r := startProc(t, bin, []string{"--repo", dir, "resume", "r-kill"}, "GAFFER_TEST_PAUSE_SESSION=none")
			out, code := r.wait()
			if code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, out)
			}
			if n := strings.Count(out, "gaffer-test: session doctor/"); n != c.callsAfter {
				t.Fatalf("the resumed run called the Doctor %d times, want %d\n%s", n, c.callsAfter, out)
			}
			raw, err := exec.Command(bin, "--repo", dir, "status", "--json", "r-kill").Output()
			if err != nil {
				t.Fatal(err)
			}
			var v runview.Run
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			if v.Status != "completed" || v.Recovery == nil || v.Recovery.DoctorCalls != 1 {
				t.Fatalf("status %s recovery %+v", v.Status, v.Recovery)
			}
			if u := v.Usage["doctor"]; u.InputTokens != 7 {
				t.Fatalf("doctor usage %+v: the answer was recorded %d times", u, u.InputTokens/7)
			}
			if got := gitOut(t, dir, "show", c.m.rev("r-kill")+":impl.txt"); got != "good" {
				t.Errorf("impl.txt on %s: %q", c.m.rev("r-kill"), got)
			}
			untouched("after the run")
			c.m.workTreeGone(t, dir, "r-kill")
		})
	}
}
