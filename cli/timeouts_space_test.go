package cli

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestTimeoutWithSpaceAroundIsTheOneUsed: a careless edit leaves a space
// in `timeouts: {call: " 1s"}`. config show prints 1s, and the run, under
// the real binary with a provider that never answers the developer,
// gives up on its call after 1s, not after the 5-minute default: the
// value shown is the value used.
func TestTimeoutWithSpaceAroundIsTheOneUsed(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	var hang atomic.Bool
	hang.Store(true) // the developer's provider never answers
	dir, hung, env := hungLLMRepo(t, &hang, `{call: " 1s", call_attempts: 1}`)

	out, code := gafferCmdEnv(t, bin, env, "--repo", dir, "config", "show")
	if code != 0 || !strings.Contains(out, "  developer:\n    driver: llm\n    model: fake-model\n    timeouts:\n      call: 1s\n") {
		t.Fatalf("config show: exit %d, want the developer's call: 1s\n%s", code, out)
	}
	// The default would hold the call for 5 minutes: a bound well below
	// it tells the two apart on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := envCommand(ctx, env, bin, "--repo", dir, "run", "--goal", "Add Greet", "--auto-approve")
	b, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the run still waited on its call after 150s: the 1s timeout was not used\n%s", b)
	}
	checkStoppedByOutage(t, dir, string(b), cmd.ProcessState.ExitCode())
	if !strings.Contains(string(b), "call timeout of 1s") || hung.Load() != 1 {
		t.Errorf("want one call given up after 1s (tried %d):\n%s", hung.Load(), b)
	}
}
