package cli

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gaffer-dev/gaffer/internal/fakeresponses"
)

// TestCodexOverloadedStopsResumably: the Responses server answers 529
// (overloaded, as Anthropic-style gateways do) to every request; the real
// Codex gives up after its retries and exits 1. That is the provider's
// fault: the run stops with exit 9 having spent no attempt, review, Doctor
// call or replan, and resume finishes it once the provider answers.
func TestCodexOverloadedStopsResumably(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	var overloaded atomic.Bool
	overloaded.Store(true)
	srv, env := codexServer(t, func(r fakeresponses.Request) fakeresponses.Reply {
		if overloaded.Load() {
			return fakeresponses.Reply{Status: 529, ErrorMessage: "Overloaded"}
		}
		return codexWrites(r)
	})
	plan, script := planFiles(t, greetPlan, "reviewer: []\n")
	dir := greetRepo(t, map[string]string{"gaffer.yaml": codexProfile})

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve")
	checkStoppedByOutage(t, dir, out, code)
	if len(srv.Requests()) == 0 {
		t.Fatal("Codex never reached the provider")
	}
	if !strings.Contains(out, "status 529") { // Codex 0.171.0: "unexpected status 529 <unknown status code>: Overloaded, url: …"
		t.Errorf("the output does not say the provider was overloaded (529):\n%s", out)
	}

	overloaded.Store(false)
	out, code = gafferCmdEnv(t, bin, env, "--repo", dir, "resume")
	if code != 0 {
		t.Fatalf("resume after the overload: exit %d\n%s", code, out)
	}
	if v := statusJSON(t, "--repo", dir); v.Status != "completed" || v.Phases[0].Attempt != 1 {
		t.Errorf("status %q, phase 1 attempt %d; want completed on the first attempt", v.Status, v.Phases[0].Attempt)
	}
}
