package cli

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// The output a process or an in-process app writes while a test reads it,
// shared by the binary-level tests and the fake terminal's.

// outputWait bounds every wait on a process's output: a hang's guard, long
// enough for a loaded machine that runs the demo slowly.
const outputWait = 3 * time.Minute

// scanLines records each line read from r in out and then, when onLine is
// not nil, hands it to onLine; it returns when r ends.
func scanLines(r io.Reader, out *syncBuffer, onLine func(line string)) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		_, _ = out.Write([]byte(line + "\n"))
		if onLine != nil {
			onLine(line)
		}
	}
}

// startCaptured starts cmd with its stdout and stderr in one buffer and
// returns the buffer and a channel closed once cmd has exited. A cmd still
// running when the test ends is killed.
func startCaptured(t *testing.T, cmd *exec.Cmd) (*syncBuffer, <-chan struct{}) {
	t.Helper()
	out := new(syncBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return out, done
}

// output is what p has printed so far.
func (p *proc) output() string {
	return p.out.String()
}

// pollOutput waits until ready holds for p's output and returns that
// output and true; it returns false once p has ended without it, or when
// outputWait has passed.
func (p *proc) pollOutput(ready func(out string) bool) (string, bool) {
	for deadline := time.Now().Add(outputWait); ; time.Sleep(5 * time.Millisecond) {
		ended := false
		select {
		case <-p.done: // read after: the output is then complete
			ended = true
		default:
		}
		out := p.output()
		if ready(out) {
			return out, true
		}
		if ended || time.Now().After(deadline) {
			return out, false
		}
	}
}

// awaitOutput is pollOutput that fails the test, naming what it waited
// for, when p's output never gets ready.
func (p *proc) awaitOutput(t *testing.T, what string, ready func(out string) bool) string {
	t.Helper()
	out, ok := p.pollOutput(ready)
	if !ok {
		t.Fatalf("the process ended, or %v passed, before %s:\n%s", outputWait, what, out)
	}
	return out
}

// waitWithin is wait bounded by limit: a process that has not ended by
// then is killed, and ok is false.
func (p *proc) waitWithin(limit time.Duration) (out string, code int, ok bool) {
	select {
	case <-p.done:
		ok = true
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
	}
	out, code = p.wait()
	return out, code, ok
}

// waitOutput waits until p's output holds want (awaitOutput).
func waitOutput(t *testing.T, p *proc, want string) {
	t.Helper()
	p.awaitOutput(t, "printing "+want, func(out string) bool { return strings.Contains(out, want) })
}

// ownPostgres starts a Postgres server of the test's own, stopped when the
// test ends. Where none can start, the test is skipped, or fails when
// pgtest.Required says a server must be there.
func ownPostgres(t *testing.T) *pgtest.Server {
	t.Helper()
	srv, err := pgtest.Start()
	if err != nil {
		if pgtest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// killSeed is the seed of a kill test's random choices: def, or
// GAFFER_KILL_SEED where it is set (a value that is no seed fails the
// test rather than replay seed 0). It is logged, for the failure's replay.
func killSeed(t *testing.T, def uint64) uint64 {
	t.Helper()
	seed := def
	if s := os.Getenv("GAFFER_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("GAFFER_KILL_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (GAFFER_KILL_SEED)", seed)
	return seed
}

// benchRuns is how many runs a benchmark's store holds: GAFFER_BENCH_RUNS,
// or 1,000 (so that `make bench` stays practical).
func benchRuns(b *testing.B) int {
	b.Helper()
	v := os.Getenv("GAFFER_BENCH_RUNS")
	if v == "" {
		return 1000
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("GAFFER_BENCH_RUNS=%q: %v", v, err)
	}
	return n
}

// startDemoRun makes a demo repository and starts `gaffer run` of the
// demo's goal there as runID, auto-approved, with pace before each agent
// action; it returns the repository and the run's process.
func startDemoRun(t *testing.T, bin, runID, pace string) (string, *proc) {
	t.Helper()
	dir, _, script := demoRepo(t)
	p := startProc(t, bin, []string{"--repo", dir, "run", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script,
		"--run-id", runID, "--auto-approve", "--pace", pace}, "")
	return dir, p
}

// serveDemoRun makes a demo repository, starts `gaffer serve` on it and
// submits the demo's goal there as runID, auto-approved, with pace before
// each agent action; it returns the repository and the serve.
func serveDemoRun(t *testing.T, bin, runID, pace string) (string, *server) {
	t.Helper()
	dir, _, script := demoRepo(t)
	s := startServe(t, bin, dir)
	out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script,
		"--run-id", runID, "--auto-approve", "--pace", pace)
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	return dir, s
}
