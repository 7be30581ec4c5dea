package cli

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests of issue 35 item 3: a stopped run says why, and its clock
// stops at its last checkpoint.

// stopLine is the line status prints under the status line of a run
// interrupted (Ctrl-C, a kill): when and where, from its last checkpoint.
var stopLine = regexp.MustCompile(`^stopped:   interrupted at \d\d:\d\d:\d\d \S+ during phase (\d) \(attempt (\d)\)$`)

// ptyRun is a gaffer process on a real pseudo-terminal, its controlling
// terminal: what the terminal shows is read off its master side.
type ptyRun struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	screen strings.Builder
	done   chan struct{}
}

// startOnPTY starts bin with args in a session of its own whose
// controlling terminal is a new pty, as a shell starts it in a terminal.
func startOnPTY(t *testing.T, bin string, args ...string) *ptyRun {
	t.Helper()
	master, tty := openPTYPair(t)
	p := &ptyRun{cmd: exec.Command(bin, args...), master: master, done: make(chan struct{})}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = tty, tty, tty
	p.cmd.Env = append(os.Environ(), "TERM=xterm", "PAGER=")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; EOF on the master once it exits
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	go func() {
		r := bufio.NewReader(master)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			p.mu.Lock()
			p.screen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				break
			}
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *ptyRun) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.screen.String()
}

// waitScreen waits until the terminal has shown s.
func (p *ptyRun) waitScreen(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.output(), s) {
		select {
		case <-p.done:
			t.Fatalf("exited before showing %q:\n%s", s, p.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q:\n%s", s, p.output())
		}
	}
}

// statusLines runs `status RUN` and returns its lines.
func statusLines(t *testing.T, bin, dir, runID string) []string {
	t.Helper()
	out, code := gafferCmd(t, bin, "--repo", dir, "status", runID)
	if code != ExitOK {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	return strings.Split(out, "\n")
}

// checkStoppedStatus checks what status says of run runID, stopped
// without a kept reason during phase 1: the status line, when and where
// under it, and the resume command, which must continue the run when
// typed; its phase clock stands still.
func checkStoppedStatus(t *testing.T, bin, dir, runID string) {
	t.Helper()
	lines := statusLines(t, bin, dir, runID)
	if len(lines) < 4 || lines[1] != "status:    running (stopped: no process runs it)" || !stopLine.MatchString(lines[2]) ||
		lines[3] != "resume:    gaffer --repo "+dir+" resume "+runID+" continues it" {
		t.Fatalf("status of the interrupted run, want the status, when and where it stopped, and resume under it:\n%s", strings.Join(lines, "\n"))
	}
	if m := stopLine.FindStringSubmatch(lines[2]); m[1] != "1" || m[2] != "1" {
		t.Errorf("stopped in phase %s, attempt %s; want 1, 1: %s", m[1], m[2], lines[2])
	}
	phase := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "Phase 1 ") {
			phase = l
		}
	}
	if !strings.Contains(phase, "◌ Stopped") || strings.Contains(strings.Join(lines, "\n"), "Running") {
		t.Errorf("the dead run's phase is drawn running: %q", phase)
	}
	// The clock stopped at the last checkpoint: a second later, the
	// same picture.
	time.Sleep(1100 * time.Millisecond)
	if again := statusLines(t, bin, dir, runID); strings.Join(again, "\n") != strings.Join(lines, "\n") {
		t.Errorf("status of a dead run changed a second later:\n%s\nthen\n%s", strings.Join(lines, "\n"), strings.Join(again, "\n"))
	}
	// list's footnote sends the user to status, which said why.
	list, _ := gafferCmd(t, bin, "--repo", dir, "list")
	if !strings.Contains(list, runID+"  stopped ") || !strings.Contains(list, "gaffer status RUN says why") {
		t.Errorf("list:\n%s", list)
	}
	// The resume line works as typed.
	resume := strings.TrimSuffix(strings.TrimPrefix(lines[3], "resume:    "), " continues it")
	out, err := exec.Command("sh", "-c", strings.Replace(resume, "gaffer", bin, 1)).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", resume, err, out)
	}
	if v, _ := statusOf(t, bin, dir, runID); v.Status != "completed" || v.Stopped {
		t.Errorf("after %s: %s, stopped %v", resume, v.Status, v.Stopped)
	}
}

// TestCtrlCOnATerminalThenStatusSaysWhy: a run in a real terminal, Ctrl-C
// typed there (the terminal's SIGINT): status says it was interrupted,
// when, in which phase and attempt, and how to continue; the clock
// stands still; resume, typed as shown, finishes it.
func TestCtrlCOnATerminalThenStatusSaysWhy(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	const id = "r-20260101-ctrlc"
	p := startOnPTY(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--pace", "400ms", "--run-id", id)
	p.waitScreen(t, "[developer p1 a1 i1] write")
	if _, err := p.master.Write([]byte{0x03}); err != nil { // ^C
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not stop on ^C:\n%s", p.output())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != ExitFailure || !strings.Contains(p.output(), "interrupted") {
		t.Fatalf("^C: exit %d, want %d saying it was interrupted:\n%s", code, ExitFailure, p.output())
	}
	checkStoppedStatus(t, bin, dir, id)
}

// TestKilledRunThenStatusSaysWhy: the same after kill -9, which leaves
// nothing behind but the checkpoints.
func TestKilledRunThenStatusSaysWhy(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	const id = "r-20260101-kill9"
	p := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--pace", "400ms", "--run-id", id}, "")
	waitOutput(t, p, "[developer p1 a1 i1] write")
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait()
	checkStoppedStatus(t, bin, dir, id)
}

// errorStoppedRun makes a demo repository and runs its plan there as id
// up to the plan's approval; then it moves the script away and approves
// (`approve` with approveArgs), so that the run stops on that error
// (exit 9). It returns the repository.
func errorStoppedRun(t *testing.T, bin, id string, approveArgs ...string) string {
	t.Helper()
	dir, plan, script := demoRepo(t)
	awaitingRun(t, bin, dir, plan, script, id)
	if err := os.Rename(script, script+".away"); err != nil {
		t.Fatal(err)
	}
	if out, code := gafferCmd(t, bin, append([]string{"--repo", dir, "approve"}, approveArgs...)...); code != ExitStopped {
		t.Fatalf("approve with the script gone: exit %d, want %d\n%s", code, ExitStopped, out)
	}
	return dir
}

// TestErrorStopSaysWhyUnderTheStatusLine: a run stopped by an error
// (approve exits 9: its script is gone) shows the error right under the
// status line, then when and where, then what to do; not below the tree.
func TestErrorStopSaysWhyUnderTheStatusLine(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	const id = "r-20260101-err"
	dir := errorStoppedRun(t, bin, id, id)
	lines := statusLines(t, bin, dir, id)
	v, _ := statusOf(t, bin, dir, id)
	if len(lines) < 5 || lines[1] != "status:    running (stopped: no process runs it)" || lines[2] != "last error: "+v.LastError ||
		!regexp.MustCompile(`^stopped:   by that error at \d\d:\d\d:\d\d \S+ during phase 1 \(attempt 1\)$`).MatchString(lines[3]) ||
		lines[4] != "resume:    fix the cause, then gaffer --repo "+dir+" resume "+id+" continues it" || v.Interrupted {
		t.Fatalf("status of a run stopped by an error:\n%s", strings.Join(lines, "\n"))
	}
	if n := strings.Count(strings.Join(lines, "\n"), v.LastError); n != 1 {
		t.Errorf("the error is in status %d times, want once", n)
	}
}

// TestClosedStdoutKeepsTheRunGoing (issue 35 item 4): `gaffer run … |
// head -1`: the reader goes after one line, and the run is not killed by
// SIGPIPE: it completes, exits 0, and says nothing more (nothing on
// stderr either).
func TestClosedStdoutKeepsTheRunGoing(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	const id = "r-20260101-head"
	cmd := exec.Command(bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	stdout.Close() // head -1 is done
	err = cmd.Wait()
	st := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err != nil || st.Signaled() || cmd.ProcessState.ExitCode() != 0 || stderr.Len() != 0 {
		t.Fatalf("run | head -1: %v (signal %v), exit %d, stderr %q; want exit 0 and nothing said (first line %q)",
			err, st.Signal(), cmd.ProcessState.ExitCode(), stderr.String(), first)
	}
	if v, _ := statusOf(t, bin, dir, id); v.Status != "completed" {
		t.Fatalf("the run after its reader went: %s", v.Status)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "main..gaffer/"+id); n == "0" {
		t.Error("the run's branch has no commits")
	}
}
