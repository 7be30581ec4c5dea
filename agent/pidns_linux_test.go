package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// victim starts a process of this user, outside any session, whose
// command line holds a secret, and returns it.
func victim(t *testing.T) *exec.Cmd {
	t.Helper()
	v := exec.Command("sh", "-c", "sleep 300", "gaffer-victim", "--token=ghp-cmdline-canary-77")
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Process.Kill(); _ = v.Wait() })
	return v
}

// stateOf returns process pid's state letter (R, S, T, Z…) from /proc.
func stateOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// TestToolboxRunSeesAndSignalsOnlyItsOwn is issue 30's attack on other
// processes: a command reads every /proc/*/cmdline, where another
// program's token sits, and sends SIGSTOP then SIGKILL to gaffer (this
// test process, through its pid and through its parent's) and to that
// program. In a PID namespace of its own it sees only its own processes
// and reaches none of the others: the token is not in its output, and
// gaffer and the program run on.
func TestToolboxRunSeesAndSignalsOnlyItsOwn(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{})
	if ok, why := tb.helper.PID(); !ok {
		t.Skip(why)
	}
	v := victim(t)
	cmd := fmt.Sprintf(`cat /proc/[0-9]*/cmdline | tr '\0' ' '; echo
for p in %d %d $PPID; do kill -STOP $p 2>/dev/null && echo stopped:$p; kill -9 $p 2>/dev/null && echo killed:$p; done
echo seen: $(ls -d /proc/[0-9]* | wc -l)`, os.Getpid(), v.Process.Pid)
	res, err := tb.Run(context.Background(), cmd, nil)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	if strings.Contains(res.Output, "ghp-cmdline-canary-77") {
		t.Errorf("the command read another process's command line:\n%s", res.Output)
	}
	if s := stateOf(v.Process.Pid); s != "S" && s != "R" {
		t.Errorf("the other program is %s after the command, want it running:\n%s", s, res.Output)
	}
	if !strings.Contains(res.Output, "seen: ") {
		t.Errorf("the command did not run to its end:\n%s", res.Output)
	}
}

// TestToolboxRunSeesOthersWhenOff shows the test above can fail: with
// confinement off, the command reads the other program's token.
func TestToolboxRunSeesOthersWhenOff(t *testing.T) {
	tb, _ := newTestToolbox(t, ToolboxOptions{Confine: ConfineOff})
	victim(t)
	res, err := tb.Run(context.Background(), `cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' '`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "ghp-cmdline-canary-77") {
		t.Errorf("unconfined, the command did not read the token:\n%s", res.Output)
	}
}

// escapes is a command that leaves processes behind that left its
// process group (setsid), one of them a double fork, one writing into
// the repository every 10 ms, one holding the command's output pipe.
const escapes = `setsid sh -c 'while :; do echo x >> escaped; sleep 0.01; done' </dev/null >/dev/null 2>&1 &
(setsid sleep 301 </dev/null >/dev/null 2>&1 &)
setsid sleep 302 &
sleep 0.2
echo done`

// TestToolboxRunEndsSetsidEscapes is issue 30's setsid escape: after the
// command, none of what it left runs (no process works in the
// repository any more, and the file it wrote stops growing), and the
// command ends normally, not with "WaitDelay expired" for the pipe a
// survivor held.
func TestToolboxRunEndsSetsidEscapes(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{})
	res, err := tb.Run(context.Background(), escapes, nil)
	if err != nil || res.Failed() || !strings.Contains(res.Output, "done") {
		t.Fatalf("run: %v (exit %d)\n%s", err, res.ExitCode, res.Output)
	}
	if left := testkit.NoneIn(dir); len(left) > 0 {
		t.Fatalf("processes %v outlived the command", left)
	}
	grown := func() bool {
		fi, err := os.Stat(filepath.Join(dir, "escaped"))
		if err != nil {
			t.Fatalf("the escaped writer never wrote: %v", err)
		}
		size := fi.Size()
		time.Sleep(100 * time.Millisecond)
		fi, _ = os.Stat(filepath.Join(dir, "escaped"))
		return fi.Size() != size
	}
	if grown() {
		t.Errorf("something still writes into the repository after the command")
	}
}

// TestToolboxRunLeavesSetsidEscapesWhenOff shows the test above can
// fail: with confinement off, the setsid writer outlives the command.
func TestToolboxRunLeavesSetsidEscapesWhenOff(t *testing.T) {
	tb, dir := newTestToolbox(t, ToolboxOptions{Confine: ConfineOff})
	res, err := tb.Run(context.Background(), `setsid sh -c 'while :; do echo x >> escaped; sleep 0.01; done' </dev/null >/dev/null 2>&1 & sleep 0.2`, nil)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, res.Output)
	}
	left := testkit.ProcessesIn(dir)
	for _, pid := range left {
		_ = (&os.Process{Pid: pid}).Kill()
	}
	if len(left) == 0 {
		t.Errorf("unconfined, nothing outlived the command: the test proves nothing")
	}
}
