package cli

import (
	"bufio"
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// The run process logs its run's events through slog, with run, node and
// phase attributes.
func TestRunLogsEventsAsJSON(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	const runID = "r-20260101-logs"
	cmd := exec.Command(bin, "--log-format", "json", "--log-level", "debug", "--repo", dir, "run",
		"--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script, "--run-id", runID, "--auto-approve")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("run: %v\n%s%s", err, out, stderr.String())
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if rec["run"] != runID {
			continue
		}
		msg, _ := rec["msg"].(string)
		switch {
		case msg == "node started" && rec["level"] == "DEBUG" && rec["node"] != nil:
			seen["node started"] = true
		case msg == "phase finished" && rec["level"] == "INFO" && rec["phase"] != nil && rec["node"] != nil:
			seen["phase finished"] = true
		case msg == "review" && rec["level"] == "INFO" && rec["phase"] != nil:
			seen["review"] = true
		}
	}
	for _, want := range []string{"node started", "phase finished", "review"} {
		if !seen[want] {
			t.Errorf("no %q line with the run's attributes in:\n%s", want, stderr.String())
		}
	}
}

// A serve whose metrics port is taken says so in one line and exits with
// the precondition code, not as a usage error.
func TestServeOnABusyMetricsPort(t *testing.T) {
	bin := gafferBinary(t)
	dir, _, _ := demoRepo(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	got, code := gafferCmd(t, bin, "--repo", dir, "serve", "--metrics-addr", addr)
	want := "gaffer: listen " + addr + ": address already in use; pass --metrics-addr 127.0.0.1:PORT\n"
	if code != ExitPrecondition || got != want {
		t.Fatalf("serve on a busy port: exit %d, output\n%q\nwant exit %d and\n%q", code, got, ExitPrecondition, want)
	}
}
