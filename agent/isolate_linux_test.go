package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// environProbe is a command that tries to read the environment of each
// pid given and prints, per pid, "read" or "refused".
func environProbe(pids ...int) string {
	var b strings.Builder
	for _, p := range pids {
		fmt.Fprintf(&b, "if head -c 1 /proc/%d/environ >/dev/null 2>&1; then echo %d:read; else echo %d:refused; fi; ", p, p, p)
	}
	// A process the command starts itself is its own and stays readable.
	b.WriteString(`sleep 5 & kid=$!; if head -c 1 /proc/$kid/environ >/dev/null 2>&1; then echo kid:read; else echo kid:refused; fi; kill $kid`)
	return b.String()
}

// TestToolboxRunCannotReadOtherEnvirons runs a command, as an agent's run
// action is run, that reads /proc/PID/environ of gaffer (this test
// process), of gaffer's parent (the user's shell) and of an unrelated
// process of the same user holding a secret: every read is refused, while
// the command can read the environment of a process it starts itself.
func TestToolboxRunCannotReadOtherEnvirons(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{Warn: func(m string) { t.Skip(m) }})
	other := exec.Command("sleep", "300")
	other.Env = append(os.Environ(), "AWS_SECRET_ACCESS_KEY=not-for-agents")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	res, err := tb.Run(context.Background(), environProbe(os.Getpid(), os.Getppid(), other.Process.Pid), nil)
	if err != nil || res.Failed() {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	for _, want := range []string{
		fmt.Sprintf("%d:refused", os.Getpid()),
		fmt.Sprintf("%d:refused", os.Getppid()),
		fmt.Sprintf("%d:refused", other.Process.Pid),
		"kid:read",
	} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("want %q in the command's output:\n%s", want, res.Output)
		}
	}
}

// TestToolboxRunReadsOtherEnvironsWhenOff shows the test above can fail:
// with confinement off, the command reads gaffer's environment.
func TestToolboxRunReadsOtherEnvironsWhenOff(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{Confine: ConfineOff})
	res, err := tb.Run(context.Background(), environProbe(os.Getpid()), nil)
	if err != nil || res.Failed() {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	if want := fmt.Sprintf("%d:read", os.Getpid()); !strings.Contains(res.Output, want) {
		t.Errorf("want %q unconfined:\n%s", want, res.Output)
	}
}
