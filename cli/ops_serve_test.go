package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/runview"
)

var opsBin struct {
	once sync.Once
	path string
	err  error
}

// gafferBinary builds cmd/gaffer once for the ops tests.
func gafferBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs real processes")
	}
	opsBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "gaffer-ops-bin")
		if err != nil {
			opsBin.err = err
			return
		}
		opsBin.path = filepath.Join(dir, "gaffer")
		// -trimpath, as make build: a build from another directory
		// (TestFirstDay's clone) finds the packages in go's cache.
		build := exec.Command("go", "build", "-trimpath", "-o", opsBin.path, "./cmd/gaffer")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			opsBin.err = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if opsBin.err != nil {
		t.Fatal(opsBin.err)
	}
	return opsBin.path
}

// server is a running `gaffer serve`.
type server struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     syncBuffer
	metrics string // host:port of /metrics
	done    chan struct{}
}

var serveBanner = regexp.MustCompile(`metrics http://([0-9.:]+)/metrics`)

func startServe(t *testing.T, bin, dir string, args ...string) *server {
	t.Helper()
	return startServeEnv(t, bin, dir, nil, args...)
}

// startServeEnv is startServe with env (NAME=VALUE entries) added to
// serve's environment: a parallel test's settings, where t.Setenv would
// change every test's.
func startServeEnv(t *testing.T, bin, dir string, env []string, args ...string) *server {
	t.Helper()
	s := &server{t: t, done: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"--repo", dir, "serve", "--metrics-addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = append(append(os.Environ(), "GAFFER_LOG_FORMAT=json"), env...)
	r, w := io.Pipe()
	s.cmd.Stdout, s.cmd.Stderr = w, w
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		scanLines(r, &s.out, func(line string) {
			if m := serveBanner.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		})
		close(s.done)
	}()
	go func() { _ = s.cmd.Wait(); w.Close() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.metrics = <-addr:
	case <-s.done:
		t.Fatalf("serve exited:\n%s", s.output())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start:\n%s", s.output())
	}
	return s
}

func (s *server) output() string {
	return s.out.String()
}

// stop sends sig and returns the exit code.
func (s *server) stop(sig syscall.Signal) int {
	s.t.Helper()
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatalf("serve did not stop on %v:\n%s", sig, s.output())
	}
	for s.cmd.ProcessState == nil {
		time.Sleep(time.Millisecond)
	}
	return s.cmd.ProcessState.ExitCode()
}

// binWithEnv returns a script that runs bin with env (NAME=VALUE
// entries) added to its environment: the gaffer of a parallel test whose
// every process, the helpers' (statusOf, waitStatus) too, needs settings
// that t.Setenv would give every test. The script execs bin, so signals
// sent to the process reach gaffer.
func binWithEnv(t *testing.T, bin string, env ...string) string {
	t.Helper()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s=%s\n", k, quote(v))
	}
	fmt.Fprintf(&b, "exec %s \"$@\"\n", quote(bin))
	p := filepath.Join(t.TempDir(), "gaffer")
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// envCommand is exec.CommandContext with env (NAME=VALUE entries) added
// to this process's environment.
func envCommand(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// gafferCmd runs the binary and returns its output and exit code.
func gafferCmd(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	return gafferCmdEnv(t, bin, nil, args...)
}

// gafferCmdEnv is gafferCmd with env (KEY=VALUE entries) added to the
// binary's environment: a parallel test's settings, where t.Setenv would
// change every test's.
func gafferCmdEnv(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("gaffer %v: %v", args, err)
		}
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// statusOf reads a run's status with `gaffer status --json`.
func statusOf(t *testing.T, bin, dir, runID string) (runview.Run, string) {
	t.Helper()
	v, stderr, err := binStatus(bin, dir, runID)
	if err != nil {
		t.Fatal(err)
	}
	return v, stderr
}

// tryStatus is statusOf returning its error.
func tryStatus(bin, dir, runID string) (runview.Run, error) {
	v, _, err := binStatus(bin, dir, runID)
	return v, err
}

// binStatus runs bin's `status RUN --json` in dir's repository.
func binStatus(bin, dir, runID string) (runview.Run, string, error) {
	cmd := exec.Command(bin, "--repo", dir, "status", runID, "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var v runview.Run
	if err == nil {
		err = json.Unmarshal(out, &v)
	}
	if err != nil {
		return v, stderr.String(), fmt.Errorf("status %s: %w\n%s%s", runID, err, out, stderr.String())
	}
	return v, stderr.String(), nil
}

// waitStatus polls until the run has status want.
func waitStatus(t *testing.T, bin, dir, runID, want string, s *server) runview.Run {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute) // a hang's guard: a loaded machine runs the demo slowly
	for {
		v, err := tryStatus(bin, dir, runID)
		if err != nil {
			t.Fatalf("%v\nserve:\n%s", err, s.output())
		}
		if v.Status == want {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %s\nserve:\n%s", runID, v.Status, want, s.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestServeSubmitApproveThroughSocket(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	s := startServe(t, bin, dir)
	const runID = "r-20260101-serve1"
	goal := profile.PlanTitle(demo.Plan, "plan.md")
	out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", goal, "--script", script, "--run-id", runID)
	if code != 0 || !strings.Contains(out, runID+" queued") {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	// The store is held by serve: status answers through the socket.
	waitStatus(t, bin, dir, runID, "awaiting_approval", s)
	info, err := control.NewClient(filepath.Join(dir, ".git", "gaffer")).Ping(t.Context())
	if err != nil || info.Kind != "serve" || info.PID != s.cmd.Process.Pid {
		t.Fatalf("ping = %+v, %v", info, err)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "approve", runID)
	if code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
	// status --watch --json follows the run to its end through the socket.
	watch, code := gafferCmd(t, bin, "--repo", dir, "status", runID, "--watch", "--json", "--interval", "50ms")
	if code != 0 {
		t.Fatalf("status --watch: exit %d\n%s", code, watch)
	}
	lines := strings.Split(strings.TrimSpace(watch), "\n")
	var last WatchView
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("watch output: %v\n%s", err, watch)
	}
	if last.Status != "completed" || len(last.Phases) == 0 || last.Phases[0].Attempt < 1 || last.Phases[0].Tasks[0].Title == "" {
		t.Fatalf("last watch view = %+v", last)
	}
	v := waitStatus(t, bin, dir, runID, "completed", s)
	if len(v.Phases) == 0 {
		t.Fatalf("no phases: %+v", v)
	}
	list, code := gafferCmd(t, bin, "--repo", dir, "list")
	if code != 0 || !strings.Contains(list, runID) {
		t.Fatalf("list: exit %d\n%s", code, list)
	}
	body := scrape(t, s.metrics)
	want := fmt.Sprintf(`gaffer_phase_outcomes_total{outcome="completed"} %d`, len(v.Phases))
	if !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s:\n%s", want, grepLines(body, "gaffer_phase"))
	}
	// serve logs JSON with run, node and phase attributes.
	logged := false
	for _, line := range strings.Split(s.output(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "phase finished" {
			continue
		}
		// review decides an attempt's outcome, or recover when recovery
		// does (the demo's phase 4 attempt 2, replanned).
		if rec["run"] != runID || rec["phase"] == nil || (rec["node"] != "review" && rec["node"] != "recover") {
			t.Errorf("phase log record lacks run, phase or node: %s", line)
		}
		logged = true
	}
	if !logged {
		t.Errorf("no JSON \"phase finished\" record in serve's log:\n%s", s.output())
	}
	if m := regexp.MustCompile(`(?m)^gaffer_checkpoint_write_seconds_count (\d+)`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("checkpoint writes were not timed:\n%s", grepLines(body, "gaffer_checkpoint"))
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d after SIGTERM\n%s", code, s.output())
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "gaffer.sock")); !os.IsNotExist(err) {
		t.Errorf("socket left after a clean stop: %v", err)
	}
}

func grepLines(s, substr string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func TestRunDetachAndRunMetrics(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, _, script := demoRepo(t)
	goal := profile.PlanTitle(demo.Plan, "plan.md")

	// Without serve, --detach says how to start one.
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--detach", "--goal", goal, "--script", script)
	if code != ExitPrecondition || !strings.Contains(out, "gaffer serve") {
		t.Fatalf("run --detach without serve: exit %d\n%s", code, out)
	}

	// run --metrics-addr serves the run's metrics while it runs.
	p := startProc(t, bin, []string{"--repo", dir, "run", "--goal", goal, "--script", script, "--run-id", "r-20260101-metric",
		"--auto-approve", "--pace", "20ms", "--metrics-addr", "127.0.0.1:0"}, "")
	re := regexp.MustCompile(`metrics on http://([0-9.:]+)/metrics`)
	addr := re.FindStringSubmatch(p.awaitOutput(t, "the run's metrics address", re.MatchString))[1]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("metrics on %s, want loopback", addr)
	}
	body := scrape(t, addr)
	if !strings.Contains(body, "gaffer_node_transitions_total") && !strings.Contains(body, "gaffer_phase_outcomes_total") {
		t.Fatalf("/metrics of run:\n%s", body)
	}
	if out, code := p.wait(); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}

	// While serve holds the store, run points at --detach, and --detach queues.
	s := startServe(t, bin, dir)
	out, code = gafferCmd(t, bin, "--repo", dir, "run", "--goal", goal, "--script", script, "--allow-dirty")
	if code != ExitLocked || !strings.Contains(out, "--detach") {
		t.Fatalf("run while serve holds the store: exit %d\n%s", code, out)
	}
	out, code = gafferCmd(t, bin, "--repo", dir, "run", "--detach", "--goal", goal, "--script", script,
		"--run-id", "r-20260101-detach", "--auto-approve")
	if code != 0 || !strings.Contains(out, "queued") {
		t.Fatalf("run --detach: exit %d\n%s", code, out)
	}
	waitStatus(t, bin, dir, "r-20260101-detach", "completed", s)
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, s.output())
	}
}
