package nodes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// stepPhases is how many phases a step-cost run goes through: its steps
// are the ones measured.
const stepPhases = 4

// stepRun is a real workflow on a real repository, set up as a run of an
// n-task plan (task mode: one phase per task) finds it near its end: the
// execution directory already holds the summary of every phase, committed.
// The run itself goes through its first stepPhases phases, the developer
// editing one source file in each, so that only the plan's size differs
// between runs of different n.
type stepRun struct {
	repo   *workspace.Repo
	runner *graph.Runner[state.ExecutionState]
	start  state.ExecutionState
	limit  int // steps: validator, approval, then three per phase
	phases int // phases the run goes through
}

func newStepRun(tb testing.TB, n int) *stepRun {
	tb.Helper()
	return newStepRunPhases(tb, n, stepPhases)
}

// newStepRunPhases is newStepRun going through its first phases phases.
func newStepRunPhases(tb testing.TB, n, phases int) *stepRun {
	tb.Helper()
	ctx := context.Background()
	var md strings.Builder
	md.WriteString("# Plan: growth\n\nA plan of many small tasks.\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&md, "### Task %d: change %d\n\nEdit app.go so that step %d of the feature works.\n\n", i, i, i)
	}
	s, err := state.NewRun(state.RunInfo{ID: "r-1", Goal: "build it", CreatedAt: fixedTime},
		state.RunConfig{AutoApprove: true, SkipTDDCheck: true, PlanPath: "plan.md"})
	if err != nil {
		tb.Fatal(err)
	}
	s.Plan.Markdown = md.String()

	dir := tb.TempDir()
	repo, err := workspace.Init(dir, "main")
	if err != nil {
		tb.Fatal(err)
	}
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("README.md", "# growth\n")
	write("src/app.go", "package src\n")
	for i := 1; i <= n; i++ {
		write(path.Join(s.Run.ExecDir, fmt.Sprintf("phase-%d", i), "summary.md"),
			fmt.Sprintf("# Phase %d summary\n\nCompleted in attempt 1.\n\nTasks:\n- Task %d: change %d\n", i, i, i))
	}
	if _, err := repo.Commit(ctx, "initial", nil, workspace.CommitOptions{
		Author: workspace.Signature{Name: "t", Email: "t@example.invalid"}, When: fixedTime}); err != nil {
		tb.Fatal(err)
	}
	write("notes.txt", "the user's own notes\n")

	var sc strings.Builder
	sc.WriteString("developer:\n")
	for i := 1; i <= phases; i++ {
		fmt.Fprintf(&sc, "  - phase: %d\n    actions:\n      - write: {path: src/app.go, content: \"package src // %d\\n\"}\n", i, i)
	}
	parsed, err := script.Parse("script.yaml", []byte(sc.String()))
	if err != nil {
		tb.Fatal(err)
	}
	drv := script.NewDriver(parsed, script.Options{})
	bs, err := badger.Open(tb.TempDir(), badger.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bs.Close() })
	g, err := Build(Config{Repo: repo, Clock: func() time.Time { return fixedTime }, Drivers: func(role agent.Role, _ state.RunConfig) (agent.Driver, error) {
		if role == agent.RoleEvaluator || role == agent.RoleDoctor || role == agent.RoleReplanner {
			return nil, nil
		}
		return drv, nil
	}})
	if err != nil {
		tb.Fatal(err)
	}
	limit := 2 + 3*phases
	if phases == n {
		limit += 20 // to the run's end, past its last phase
	}
	r, err := g.Compile(graph.WithStore(bs), graph.WithDurability(graph.Async), graph.WithCodec(NewCodec()), graph.WithMerge(Merge), graph.WithStepLimit(limit))
	if err != nil {
		tb.Fatal(err)
	}
	return &stepRun{repo: repo, runner: r, start: s, limit: limit, phases: phases}
}

// run takes the run's steps and returns how many it took.
func (r *stepRun) run(tb testing.TB) int {
	tb.Helper()
	ctx := context.Background()
	if _, err := r.runner.Run(ctx, "r-1", r.start); err != nil && !errors.Is(err, graph.ErrStepLimit) {
		tb.Fatal(err)
	}
	snap, err := r.runner.State(ctx, "r-1")
	if err != nil {
		tb.Fatal(err)
	}
	s := snap.State
	if len(s.Errors) > 0 {
		tb.Fatalf("run errors: %q", s.Errors)
	}
	if done := s.Progress.CurrentPhase(); done < r.phases && !(r.phases == len(s.Plan.Phases) && s.Status == state.RunCompleted) {
		tb.Fatalf("run is in phase %d after %d steps, want %d phases done (status %v)", done+1, snap.Seq, r.phases, s.Status)
	}
	return int(snap.Seq)
}

// BenchmarkStepCost reports the wall time of one step of a real run
// (ns/step) for plans of 10, 100 and 1,000 tasks, the execution directory
// holding every phase's summary (see newStepRun).
func BenchmarkStepCost(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			var total time.Duration
			steps := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				r := newStepRun(b, n)
				b.StartTimer()
				t0 := time.Now()
				steps += r.run(b)
				total += time.Since(t0)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(steps), "ns/step")
		})
	}
}

// stepWork runs newStepRun(n) and returns the workspace work (see
// workspace.IOCounts) per step, once the Repo has read HEAD's trees.
func stepWork(tb testing.TB, n int) (per map[string]float64) {
	tb.Helper()
	r := newStepRun(tb, n)
	// A Repo reads each tree object once; reading HEAD's here leaves that
	// one-off cost of a new process out of the steps'.
	if _, err := r.repo.Status(context.Background()); err != nil {
		tb.Fatal(err)
	}
	before := r.repo.IOCounts()
	steps := float64(r.run(tb))
	d := r.repo.IOCounts().Sub(before)
	return map[string]float64{"stats": float64(d.Stats) / steps, "reads": float64(d.Reads) / steps,
		"dirs": float64(d.Dirs) / steps, "trees": float64(d.Trees) / steps, "stores": float64(d.Stores) / steps}
}

// TestStepWorkIsFlat holds the git work of a step to what the step
// changed: at 1,000 tasks, a step reads, hashes and stores no more than
// three times what it does at 10 (files read to be hashed, tree objects
// read, objects looked up or stored), however many phase files the
// execution directory holds. Stats and directory listings are logged, not
// held: Commit still stats every file and lists every directory, as `git
// add -A` does without a file system monitor.
func TestStepWorkIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up a repository of 1,000 phase summaries")
	}
	small, large := stepWork(t, 10), stepWork(t, 1000)
	for _, k := range []string{"reads", "trees", "stores", "stats", "dirs"} {
		t.Logf("%s/step: %.1f at 10 tasks, %.1f at 1,000 tasks", k, small[k], large[k])
	}
	for _, k := range []string{"reads", "trees", "stores"} {
		if large[k] > 3*small[k]+1 {
			t.Errorf("%s/step: %.1f at 1,000 tasks, over 3× the %.1f at 10 tasks", k, large[k], small[k])
		}
	}
}

// TestWholeRunMemory prints the peak RSS (VmHWM) of this process after a
// run of a 1,000-task plan (one task a phase) goes through every phase to
// its end: the workflow, a Badger store and the script driver in one
// process. It is a measurement, not a check: without
// GAFFER_MEASURE_WHOLE_RUN (the number of tasks, 1000) it is skipped.
//
//	GAFFER_MEASURE_WHOLE_RUN=1000 go test -count=1 -run TestWholeRunMemory -v -timeout 60m ./nodes
func TestWholeRunMemory(t *testing.T) {
	v := os.Getenv("GAFFER_MEASURE_WHOLE_RUN")
	if v == "" {
		t.Skip("a measurement: set GAFFER_MEASURE_WHOLE_RUN=1000 to run it")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("GAFFER_MEASURE_WHOLE_RUN=%q: want a number of tasks", v)
	}
	r := newStepRunPhases(t, n, n)
	t0 := time.Now()
	steps := r.run(t)
	var b []byte
	b, err = os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	hwm := "?"
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			hwm = strings.TrimSpace(v)
		}
	}
	t.Logf("%d-task run, %d checkpoints to its end in %v: peak RSS %s", n, steps, time.Since(t0).Round(time.Second), hwm)
}
