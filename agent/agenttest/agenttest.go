package agenttest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/testkit"
)

// Task is what the agent of a session is to do. A session for task k has
// Phase int(k) and a prompt that starts with k.String(), so that a script
// can match it by phase and a fake model by prompt.
type Task int

// The tasks of the suite.
const (
	// TaskAnswer: change nothing and answer Answer.
	TaskAnswer Task = iota + 1
	// TaskWriteInside: write InsideFile (relative to the repository) with
	// InsideContent, then answer Answer.
	TaskWriteInside
	// TaskWriteOutside: write OutsideFile under Env.Outside (an absolute
	// path) with InsideContent, then answer Answer.
	TaskWriteOutside
	// TaskHang: run HangCommand, which never ends by itself.
	TaskHang
	// TaskSecret: run SecretCommand, then answer with what it printed.
	TaskSecret
)

// String returns the task's name, which starts its sessions' prompts.
func (k Task) String() string {
	switch k {
	case TaskAnswer:
		return "AGENTTEST-ANSWER"
	case TaskWriteInside:
		return "AGENTTEST-WRITE-INSIDE"
	case TaskWriteOutside:
		return "AGENTTEST-WRITE-OUTSIDE"
	case TaskHang:
		return "AGENTTEST-HANG"
	case TaskSecret:
		return "AGENTTEST-SECRET"
	}
	return "Task(" + strconv.Itoa(int(k)) + ")"
}

// What the tasks use.
const (
	Answer        = "agenttest: done"
	InsideFile    = "agenttest.txt"
	InsideContent = "written by the agent\n"
	OutsideFile   = "escape.txt"
	// PIDFile is where HangCommand writes its shell's pid, in the
	// repository.
	PIDFile     = "agenttest.pid"
	HangCommand = "echo $$ > " + PIDFile + " && sleep 300"
	// SecretVar is set to Secret in the environment while the suite runs.
	SecretVar     = "AGENTTEST_API_KEY"
	Secret        = "agenttest-secret-value-4711"
	SecretCommand = "echo \"the key is $" + SecretVar + "\""
)

// Env is what the suite gives the factory.
type Env struct {
	// Outside is a directory outside the repository, for TaskWriteOutside.
	Outside string
	// Groups is the process group recorder the driver is to use.
	Groups agent.GroupRecorder
}

// Caps says which checks apply to a driver.
type Caps struct {
	// Usage: the driver reports token usage (Report.Usage and a
	// UsageUpdate message).
	Usage bool
	// NotConfined, set, says why the driver does not keep the agent's file
	// work inside the repository (the CLI driver confines its agent only
	// with Landlock); the check that a write outside is refused is then
	// skipped with this reason.
	NotConfined string
	// CommandGroups, set, says why the agent's commands run in process
	// groups other than the one the driver records (Claude Code starts its
	// Bash commands in groups of their own); the check that the command's
	// own group was recorded is then left out, and only the groups the
	// driver recorded are checked.
	CommandGroups string
}

// Factory makes a driver whose agent does the Tasks; it is called once per
// subtest, after SecretVar has been set in the environment.
type Factory func(t *testing.T, env Env) agent.Driver

// Run runs the whole suite against drivers made by factory.
func Run(t *testing.T, caps Caps, factory Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c *check)
	}{
		{"Report", testReport},
		{"WriteInside", testWriteInside},
		{"WriteOutside", testWriteOutside},
		{"Cancel", testCancel},
		{"Secret", testSecret},
		{"SecondSession", testSecondSession},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(SecretVar, Secret)
			c := &check{caps: caps, rec: &testkit.Recorder{}, outside: testkit.OutsideDir(t, ".agenttest-outside-")}
			c.d = factory(t, Env{Outside: c.outside, Groups: c.rec})
			tc.fn(t, c)
		})
	}
}

// check is one subtest's driver and what it was given.
type check struct {
	caps    Caps
	d       agent.Driver
	rec     *testkit.Recorder
	outside string
}

// session returns a developer session for task k in dir.
func session(k Task, dir string) agent.Session {
	return agent.Session{Role: agent.RoleDeveloper, RunID: "agenttest", Phase: int(k), Attempt: 1, Iteration: 1,
		Prompt: k.String() + ": do as the agenttest suite says.", Dir: dir, Tools: agent.DefaultTools(agent.RoleDeveloper)}
}

// run runs task k in dir and returns the report, the error and the
// messages streamed.
func (c *check) run(ctx context.Context, k Task, dir string) (agent.Report, []agent.Message, error) {
	var msgs []agent.Message
	s := session(k, dir)
	s.OnMessage = func(m agent.Message) { msgs = append(msgs, m) }
	rep, err := c.d.Run(ctx, s)
	return rep, msgs, err
}

// completed checks that a session answered Answer, with the usage
// reported when the driver reports it.
func (c *check) completed(t *testing.T, k Task, rep agent.Report, err error, msgs []agent.Message) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: Run: %v", k, err)
	}
	if rep.Status != agent.StatusCompleted || !strings.Contains(rep.Output, Answer) {
		t.Fatalf("%s: report %+v, want completed with %q in the output", k, rep, Answer)
	}
	if rep.SessionID == "" {
		t.Errorf("%s: no session id in the report", k)
	}
	if len(msgs) == 0 {
		t.Errorf("%s: no messages streamed", k)
	}
	if !c.caps.Usage {
		return
	}
	if rep.Usage.InputTokens+rep.Usage.OutputTokens <= 0 {
		t.Errorf("%s: usage %+v, want the tokens the agent reported", k, rep.Usage)
	}
	if !slices.ContainsFunc(msgs, func(m agent.Message) bool { return m.Kind == agent.UsageUpdate }) {
		t.Errorf("%s: no usage message", k)
	}
}

func testReport(t *testing.T, c *check) {
	rep, msgs, err := c.run(context.Background(), TaskAnswer, testkit.GitRepo(t))
	c.completed(t, TaskAnswer, rep, err, msgs)
	if len(rep.FilesChanged) != 0 {
		t.Errorf("FilesChanged = %q, want none", rep.FilesChanged)
	}
}

func testWriteInside(t *testing.T, c *check) {
	dir := testkit.GitRepo(t)
	rep, msgs, err := c.run(context.Background(), TaskWriteInside, dir)
	c.completed(t, TaskWriteInside, rep, err, msgs)
	if got := testkit.ReadFile(t, filepath.Join(dir, InsideFile)); got != InsideContent {
		t.Errorf("%s = %q, want %q", InsideFile, got, InsideContent)
	}
	if !slices.Equal(rep.FilesChanged, []string{InsideFile}) {
		t.Errorf("FilesChanged = %q, want [%s]", rep.FilesChanged, InsideFile)
	}
}

func testWriteOutside(t *testing.T, c *check) {
	if c.caps.NotConfined != "" {
		t.Skip(c.caps.NotConfined)
	}
	rep, _, err := c.run(context.Background(), TaskWriteOutside, testkit.GitRepo(t))
	if err != nil {
		t.Errorf("Run: %v; a refused write is the agent's failure, not the driver's", err)
	}
	if _, serr := os.Stat(filepath.Join(c.outside, OutsideFile)); serr == nil {
		t.Fatalf("the agent wrote outside the repository (report %+v)", rep)
	}
	if slices.ContainsFunc(rep.FilesChanged, func(p string) bool { return strings.Contains(p, OutsideFile) }) {
		t.Errorf("FilesChanged = %q names the refused file", rep.FilesChanged)
	}
}

// runResult is what a Run returned.
type runResult struct {
	rep agent.Report
	err error
}

// cancelWithin is how long a driver may take to stop once ctx is
// cancelled.
const cancelWithin = 20 * time.Second

func testCancel(t *testing.T, c *check) {
	dir := testkit.GitRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runResult, 1)
	go func() {
		rep, _, err := c.run(ctx, TaskHang, dir)
		done <- runResult{rep, err}
	}()
	pid, pgid := waitPID(t, filepath.Join(dir, PIDFile), done)
	cancel()
	var res runResult
	select {
	case res = <-done:
	case <-time.After(cancelWithin):
		t.Fatalf("Run did not return within %s of the cancellation", cancelWithin)
	}
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("Run = %v (report %+v), want an error wrapping context.Canceled", res.err, res.rep)
	}
	if !testkit.Gone(pid) {
		t.Errorf("the command's process %d outlived the cancelled session", pid)
	}
	recorded, _, forgot := c.rec.Groups()
	if len(recorded) == 0 {
		t.Errorf("no process group was recorded")
	}
	for _, g := range recorded {
		if !slices.Contains(forgot, g) {
			t.Errorf("the record of process group %d was not removed after it ended (forgot %v)", g, forgot)
		}
	}
	if pgid == 0 {
		return
	}
	if c.caps.CommandGroups != "" {
		t.Logf("the command's group %d is not checked: %s", pgid, c.caps.CommandGroups)
		return
	}
	if !slices.Contains(recorded, pgid) {
		t.Errorf("the command's process group %d was not recorded (recorded %v)", pgid, recorded)
	}
}

// waitPID waits for the hanging command to write its pid and returns it
// with its process group (0 where /proc does not tell). It fails t when
// Run ends first.
func waitPID(t *testing.T, path string, done <-chan runResult) (pid, pgid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %v", PIDFile, err)
			}
			// In a PID namespace of its own the command wrote its pid
			// there: its pid here is another.
			pid = testkit.HostPID(pid, filepath.Dir(path))
			return pid, groupOf(pid)
		}
		select {
		case res := <-done:
			t.Fatalf("Run ended before the command started: %v, %+v", res.err, res.rep)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the command did not write %s", PIDFile)
	return 0, 0
}

// groupOf returns process pid's group from /proc, or 0.
func groupOf(pid int) int {
	if runtime.GOOS != "linux" {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // state, ppid, pgrp, ...
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

func testSecret(t *testing.T, c *check) {
	rep, msgs, err := c.run(context.Background(), TaskSecret, testkit.GitRepo(t))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	ran := false
	for _, m := range msgs {
		if strings.Contains(m.Text+m.Input, Secret) {
			t.Errorf("the secret is in a %s message: %q", m.Kind, m.Text+m.Input)
		}
		ran = ran || strings.Contains(m.Text, "the key is")
	}
	for name, v := range map[string]string{"Output": rep.Output, "Summary": rep.Summary, "Error": rep.Error} {
		if strings.Contains(v, Secret) {
			t.Errorf("the secret is in the report's %s: %q", name, v)
		}
		ran = ran || strings.Contains(v, "the key is")
	}
	if !ran {
		t.Errorf("the command's output is in neither the messages nor the report (report %+v)", rep)
	}
}

func testSecondSession(t *testing.T, c *check) {
	dir := testkit.GitRepo(t)
	rep, msgs, err := c.run(context.Background(), TaskAnswer, dir)
	c.completed(t, TaskAnswer, rep, err, msgs)
	rep2, msgs, err := c.run(context.Background(), TaskWriteInside, dir)
	c.completed(t, TaskWriteInside, rep2, err, msgs)
	if got := testkit.ReadFile(t, filepath.Join(dir, InsideFile)); got != InsideContent {
		t.Errorf("%s = %q after the second session, want %q", InsideFile, got, InsideContent)
	}
}
