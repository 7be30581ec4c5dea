package cliagent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
)

// TestCLICannotReadGafferEnviron runs a CLI agent session whose process
// tries to read /proc/PID/environ of gaffer (this test process) and of
// gaffer's parent: both are refused, with confinement on; with it off, the
// same session reads gaffer's (so the test can fail).
func TestCLICannotReadGafferEnviron(t *testing.T) {
	probe := fmt.Sprintf(`for p in %d %d; do if head -c 1 /proc/$p/environ >/dev/null 2>&1; then echo $p:read; else echo $p:refused; fi; done`,
		os.Getpid(), os.Getppid())
	for _, c := range []struct {
		confine agent.Confinement
		want    string
	}{
		{agent.ConfineAuto, fmt.Sprintf("%d:refused\n%d:refused", os.Getpid(), os.Getppid())},
		{agent.ConfineOff, fmt.Sprintf("%d:read", os.Getpid())},
	} {
		d := newCLI(t, Options{Template: Template{Command: []string{"sh", "-c", probe}}, Confine: c.confine,
			Warn: func(m string) { t.Skip(m) }})
		rep, err := d.Run(context.Background(), agent.Session{Role: agent.RoleDeveloper, Dir: t.TempDir(), Prompt: "p"})
		if err != nil || rep.Status != agent.StatusCompleted {
			t.Fatalf("confine %v: run: %v %+v", c.confine, err, rep)
		}
		if !strings.Contains(rep.Output, c.want) {
			t.Errorf("confine %v: want %q in the session's output:\n%s", c.confine, c.want, rep.Output)
		}
	}
}
