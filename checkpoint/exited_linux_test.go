package checkpoint

import (
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A killed child that has not been reaped is a zombie: kill(pid, 0) still
// succeeds, but its lease must be taken over at once.
func TestProcessAliveTreatsZombiesAsDead(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !processAlive(pid) {
		t.Fatalf("running child %d: processAlive = false", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Wait for the zombie without reaping it (WNOWAIT leaves it in place).
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatalf("waitid: %v", err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("zombie %d: kill(pid, 0) = %v, want it to still succeed", pid, err)
	}
	if processAlive(pid) {
		t.Errorf("zombie %d: processAlive = true, want false", pid)
	}
	_ = cmd.Wait()
	if processAlive(pid) {
		t.Errorf("reaped %d: processAlive = true, want false", pid)
	}
}
