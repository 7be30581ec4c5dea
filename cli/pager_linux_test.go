package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ptyScreen collects what a process writes to a pty's master.
type ptyScreen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *ptyScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.ReplaceAll(s.buf.String(), "\r", "")
}

// Issue 23 item 5: on a terminal that cannot take a pager (TERM=dumb,
// NO_COLOR, no pager installed or $PAGER not found) the gaffer binary
// prints the plan plainly before the approval question, and runs no
// pager; on a full terminal the plan goes through $PAGER.
func TestPlanOnAPlainTerminalIsPrintedBeforeTheQuestion(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	noLess := t.TempDir() // a PATH with git and sh but no less
	for _, p := range []string{"git", "sh"} {
		abs, err := exec.LookPath(p)
		if err != nil {
			t.Skipf("%s: %v", p, err)
		}
		if err := os.Symlink(abs, filepath.Join(noLess, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		env   []string // besides TERM=xterm, no NO_COLOR and PAGER="tee REC"
		paged bool     // the pager gets the plan
		plain bool     // no escape sequence at all before the question
	}{
		{name: "full terminal", paged: true},
		{name: "TERM=dumb", env: []string{"TERM=dumb"}, plain: true},
		{name: "NO_COLOR", env: []string{"NO_COLOR=1"}, plain: true},
		{name: "no less", env: []string{"PAGER=", "PATH=" + noLess}},
		{name: "PAGER not found", env: []string{"PAGER=gaffer-no-such-pager -R"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, plan, script := demoRepo(t)
			rec := filepath.Join(t.TempDir(), "paged")
			master, tty := openPTYPair(t)
			cmd := exec.Command(bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-pager")
			var env []string
			for _, e := range os.Environ() {
				if k, _, _ := strings.Cut(e, "="); k != "TERM" && k != "NO_COLOR" && k != "PAGER" && !strings.HasPrefix(k, "GAFFER_") {
					env = append(env, e)
				}
			}
			cmd.Env = append(append(env, "TERM=xterm", "PAGER=tee "+rec), tc.env...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var screen ptyScreen
			go func() {
				b := make([]byte, 4096)
				for {
					n, err := master.Read(b)
					screen.mu.Lock()
					screen.buf.Write(b[:n])
					screen.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			const question = "Approve this plan? [a]pprove"
			deadline := time.Now().Add(2 * time.Minute)
			for !strings.Contains(screen.String(), question) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("no approval question:\n%q", screen.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := master.Write([]byte{4}); err != nil { // Ctrl-D: no answer, the run waits
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitAwaitingApproval {
				t.Fatalf("exit: %v, want %d\n%s", err, ExitAwaitingApproval, screen.String())
			}
			before, _, _ := strings.Cut(screen.String(), question)
			got, _ := os.ReadFile(rec)
			if tc.paged {
				if !strings.Contains(string(got), "Task 1a: Write tests for Add and Sub") {
					t.Fatalf("the pager did not get the plan: %q", got)
				}
				return
			}
			if got != nil {
				t.Fatalf("a pager ran: it got %q", got)
			}
			for _, want := range []string{"Task 1a: Write tests for Add and Sub", "Task 2b: Implement Parse", "(The plan again at any time:"} {
				if !strings.Contains(before, want) {
					t.Errorf("%q is not on the screen before the question:\n%s", want, before)
				}
			}
			if strings.Contains(before, "not found") || strings.Contains(before, "not fully functional") {
				t.Errorf("a pager's complaint on the screen:\n%s", before)
			}
			if tc.plain && strings.Contains(before, "\x1b") {
				t.Errorf("an escape sequence on a plain terminal:\n%q", before)
			}
		})
	}
}

func TestPagerFor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	have := func(progs ...string) func(string) (string, error) {
		return func(p string) (string, error) {
			for _, q := range progs {
				if p == q {
					return "/usr/bin/" + p, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	for _, tc := range []struct {
		getenv func(string) string
		look   func(string) (string, error)
		want   string
		ok     bool
	}{
		{env("TERM", "xterm"), have("less"), defaultPager, true},
		{env("TERM", "xterm", "PAGER", "most -s"), have("less", "most"), "most -s", true},
		{env("TERM", "dumb"), have("less"), "", false},
		{env("TERM", "xterm", "NO_COLOR", "1"), have("less"), "", false},
		{env("TERM", "xterm"), have(), "", false},
		{env("TERM", "xterm", "PAGER", "most"), have("less"), "", false},
	} {
		if got, ok := pagerFor(tc.getenv, tc.look); got != tc.want || ok != tc.ok {
			t.Errorf("pagerFor = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
		}
	}
}
