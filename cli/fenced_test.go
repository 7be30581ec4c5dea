package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServePausedHolderLogsAndCleansUp: serve a holds r-1 and is paused
// (SIGSTOP) as phase 1's developer session starts; serve b takes the run over and completes it; a
// wakes (SIGCONT), finds itself fenced, and is stopped cleanly. Around the
// takeover nothing logs an ERROR for what is no failure: b waiting for the
// paused holder's lease does not log one every second, and a's fenced
// write is logged at WARN as the takeover it is. a's clone of the run goes
// with its clean stop, and each agent line in serve's log names its run.
func TestServePausedHolderLogsAndCleansUp(t *testing.T) {
	t.Parallel()
	h := newTwoHosts(t, gafferBinary(t))
	bin := h.bin
	a := h.serve(t, h.ca, "a", "GAFFER_TEST_PAUSE_SESSION=developer/1/1", "GAFFER_TEST_PAUSE_FOR=3s")
	h.submit(t)
	waitLine(t, a, "gaffer-test: session developer/1/1", 1) // paused before phase 1's session
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b := h.serve(t, h.cb, "b", "GAFFER_TEST_PAUSE_FOR=3s")
	waitStatus(t, bin, h.cb, "r-1", "completed", b)
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // a's pause ends: its next write meets the fence
	if code := a.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("serve a exit %d after SIGTERM", code)
	}
	b.stop(syscall.SIGTERM)

	for name, out := range map[string]string{"a": a.output(), "b": b.output()} {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, `"level":"ERROR"`) {
				t.Errorf("serve %s logged an ERROR around the takeover: %s", name, l)
			}
			if strings.HasPrefix(l, "[developer ") || strings.HasPrefix(l, "[reviewer ") || strings.HasPrefix(l, "[architect ") {
				if !strings.Contains(l, "r-1") {
					t.Errorf("serve %s's agent line names no run: %s", name, l)
				}
			}
		}
	}
	if !strings.Contains(a.output(), "stale fencing token") && !strings.Contains(a.output(), "taken over by another host") {
		t.Errorf("serve a does not say it lost the run to another host:\n%s", a.output())
	}
	clone := filepath.Join(h.ca, ".git", "gaffer", "hosts", "a.worktrees", "r-1")
	if _, err := os.Stat(clone); err == nil {
		t.Errorf("serve a's clone of r-1 stays after its clean stop: %s", clone)
	}
}
