package procgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/internal/atomicfile"
)

// startGroup starts a shell leading a group of its own, with a child in
// the background, and returns it and the child's pid.
func startGroup(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "child")
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $! > "+pidFile+"; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	for range 500 {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			pid, err := strconv.Atoi(string(b[:len(b)-1]))
			if err == nil {
				return cmd, pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the group's child did not start")
	return nil, 0
}

func alive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z'
}

// TestKillOrphans records a live group, with its leader already gone the
// way Pdeathsig leaves it, and checks KillOrphans kills the rest and
// removes the record.
func TestKillOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	reg := Open(filepath.Join(t.TempDir(), "groups"))
	cmd, child := startGroup(t)
	if _, err := reg.Record(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(reg.Dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("registry directory %v, %v; want mode 0700", fi, err)
	}
	_ = cmd.Process.Kill() // the leader dies; the child stays in the group
	_ = cmd.Wait()
	if !alive(child) {
		t.Fatal("the child died with its leader: nothing to test")
	}
	killed, err := reg.KillOrphans()
	if err != nil || len(killed) != 1 || killed[0] != cmd.Process.Pid {
		t.Fatalf("KillOrphans = %v, %v; want [%d]", killed, err, cmd.Process.Pid)
	}
	if alive(child) {
		t.Errorf("the group's child %d is alive", child)
	}
	if entries, _ := os.ReadDir(reg.Dir()); len(entries) != 0 {
		t.Errorf("records left: %v", entries)
	}
}

// TestKillOrphansSparesARecycledPid records a group whose leader's start
// time differs from the live process with that pid — a recycled pid — and
// checks nothing is killed.
func TestKillOrphansSparesARecycledPid(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	reg := Open(filepath.Join(t.TempDir(), "groups"))
	cmd, child := startGroup(t)
	rec := liveRecord(t, reg, cmd.Process.Pid)
	rec.start-- // another process than the one with that pid now
	if err := atomicfile.WriteFile(filepath.Join(reg.Dir(), strconv.Itoa(rec.pgid)), []byte(rec.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	killed, err := reg.KillOrphans()
	if err != nil || len(killed) != 0 {
		t.Fatalf("KillOrphans = %v, %v; want nothing killed", killed, err)
	}
	if !alive(cmd.Process.Pid) || !alive(child) {
		t.Errorf("a group that is not ours was killed")
	}
	if entries, _ := os.ReadDir(reg.Dir()); len(entries) != 0 {
		t.Errorf("the stale record was kept: %v", entries)
	}
}

// TestKillOrphansReadsAnUnrenamedRecord leaves a group's record in the
// temporary file of atomicfile, synced but never renamed, as a process
// killed between the two does, and checks KillOrphans still kills the
// group and removes the file.
func TestKillOrphansReadsAnUnrenamedRecord(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	reg := Open(filepath.Join(t.TempDir(), "groups"))
	cmd, child := startGroup(t)
	rec := liveRecord(t, reg, cmd.Process.Pid)
	f, err := atomicfile.CreateTemp(filepath.Join(reg.Dir(), strconv.Itoa(cmd.Process.Pid)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(rec.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	killed, err := reg.KillOrphans()
	if err != nil || len(killed) != 1 || killed[0] != cmd.Process.Pid {
		t.Fatalf("KillOrphans = %v, %v; want [%d]", killed, err, cmd.Process.Pid)
	}
	_ = cmd.Wait()
	if alive(child) {
		t.Errorf("the group's child %d is alive", child)
	}
	if entries, _ := os.ReadDir(reg.Dir()); len(entries) != 0 {
		t.Errorf("records left: %v", entries)
	}
}

// liveRecord returns the record of live process pid's group as Record would
// write it, with reg's directory made.
func liveRecord(t *testing.T, reg *Registry, pid int) record {
	t.Helper()
	start, err := startTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := bootID()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(reg.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	return record{pgid: pid, start: start, boot: boot}
}
