package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeIdleMeasure prints what an idle `gaffer serve` costs, on
// Badger and on a real PostgreSQL (pgtest: initdb and pg_ctl): the share
// of a core it used (utime+stime from /proc/PID/stat), its RSS, and its
// voluntary context switches (wake-ups) per second, over
// GAFFER_MEASURE_IDLE (a duration, e.g. 60s) after a 5 s settle. It is a
// measurement, not a check: without the variable it is skipped.
//
//	GAFFER_MEASURE_IDLE=60s go test -count=1 -run TestServeIdleMeasure -v -timeout 10m ./cli
func TestServeIdleMeasure(t *testing.T) {
	v := os.Getenv("GAFFER_MEASURE_IDLE")
	if v == "" {
		t.Skip("a measurement: set GAFFER_MEASURE_IDLE=60s to run it")
	}
	span, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("GAFFER_MEASURE_IDLE=%q: %v", v, err)
	}
	bin := gafferBinary(t)
	t.Run("badger", func(t *testing.T) {
		dir, _, _ := demoRepo(t)
		measureIdle(t, startServe(t, bin, dir), span)
	})
	t.Run("postgres", func(t *testing.T) {
		srv := ownPostgres(t)
		dir, _, _ := demoRepo(t)
		t.Setenv("GAFFER_STORE", srv.URL("postgres"))
		measureIdle(t, startServe(t, bin, dir), span)
	})
}

// measureIdle logs s's CPU share, RSS and wake-ups over span.
func measureIdle(t *testing.T, s *server, span time.Duration) {
	t.Helper()
	pid := s.cmd.Process.Pid
	time.Sleep(5 * time.Second)
	cpu0, sw0 := procCPUTicks(t, pid), procSwitches(t, pid)
	start := time.Now()
	time.Sleep(span)
	cpu1, sw1 := procCPUTicks(t, pid), procSwitches(t, pid)
	secs := time.Since(start).Seconds()
	const hz = 100 // USER_HZ: the unit of utime and stime on Linux
	t.Logf("idle serve over %.0f s: %.2f%% of a core, RSS %s, peak RSS %s, %.1f wake-ups/s",
		secs, 100*float64(cpu1-cpu0)/hz/secs, procStatusField(t, pid, "VmRSS"), procStatusField(t, pid, "VmHWM"), float64(sw1-sw0)/secs)
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("serve exit %d after SIGTERM\n%s", code, s.output())
	}
}

// procCPUTicks is pid's utime+stime, in clock ticks.
func procCPUTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	// After the command: state is field 3, so utime (14) and stime (15)
	// are f[11] and f[12].
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return u + s
}

// procSwitches is pid's voluntary context switches over all its threads.
func procSwitches(t *testing.T, pid int) int64 {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
	}
	return n
}
