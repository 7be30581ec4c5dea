package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// benchLanes is how many independent tasks BenchmarkParallelPhase's one
// phase has, and benchWait how long each one's scripted agent waits, as a
// session waits on its model.
const (
	benchLanes = 8
	benchWait  = 2 * time.Second
)

// BenchmarkParallelPhase runs the real binary on a plan of one phase of 8
// independent tasks (disjoint files: 8 lanes) whose scripted agents each
// wait 2 s, at --parallel 1, 2, 4 and 8, and reports the phase's wall time
// (from its start to its approved commit, as the run's state records
// them) and its speed-up over --parallel 1 (x-vs-1; the goal: ≥ 3.5 at 4,
// ≥ 6 at 8).
//
//	go test -run '^$' -bench ParallelPhase -benchtime 1x ./cli
func BenchmarkParallelPhase(b *testing.B) {
	bin := buildGafferB(b)
	var one time.Duration
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("parallel=%d", n), func(b *testing.B) {
			var total time.Duration
			runs := 0
			for b.Loop() {
				total += parallelPhase(b, bin, n)
				runs++
			}
			phase := total / time.Duration(runs)
			if n == 1 {
				one = phase
			}
			b.ReportMetric(phase.Seconds(), "phase-s")
			if one > 0 {
				b.ReportMetric(float64(one)/float64(phase), "x-vs-1")
			}
		})
	}
}

// parallelPhase runs the benchmark's plan once at --parallel n in a new
// repository and returns its phase's wall time.
func parallelPhase(b *testing.B, bin string, n int) time.Duration {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "repo")
	if _, err := workspace.Init(dir, "main"); err != nil {
		b.Fatal(err)
	}
	benchFile(b, filepath.Join(dir, "README.md"), "# lanes\n")
	benchCmd(b, dir, "git", "-c", "user.name=b", "-c", "user.email=b@example.com", "add", "-A")
	benchCmd(b, dir, "git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "start")
	var plan, script strings.Builder
	plan.WriteString("# Plan: lanes\n\n")
	script.WriteString("developer:\n")
	for i := 1; i <= benchLanes; i++ {
		fmt.Fprintf(&plan, "### Task %d: file %d\n- type: test\n- depends on: none\n- files: f%d.txt\n\n", i, i, i)
		fmt.Fprintf(&script, "  - phase: 1\n    task: \"%d\"\n    actions:\n      - wait: %s\n      - write: {path: f%d.txt, content: \"%d\\n\"}\n",
			i, benchWait, i, i)
	}
	in := b.TempDir()
	benchFile(b, filepath.Join(in, "plan.md"), plan.String())
	benchFile(b, filepath.Join(in, "script.yaml"), script.String())
	const id = "r-20260101-lanes0"
	benchCmd(b, dir, bin, "--repo", dir, "run", "--plan", filepath.Join(in, "plan.md"), "--script", filepath.Join(in, "script.yaml"),
		"--auto-approve", "--parallel", fmt.Sprint(n), "--run-id", id)
	s := storedState(b, filepath.Join(dir, ".git", "gaffer"), id)
	ps := s.Progress.Phases[0]
	if s.Status != state.RunCompleted || len(ps.Lanes) != benchLanes {
		b.Fatalf("run %s, phase 1 of %d lanes", s.Status, len(ps.Lanes))
	}
	return ps.CompletedAt.Sub(ps.StartedAt)
}

// storedState reads run id's latest state from the store at dir, which no
// process holds.
func storedState(b testing.TB, dir, id string) state.ExecutionState {
	b.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	g, err := nodes.Build(nodes.Config{Repo: &workspace.Repo{},
		Drivers: func(agent.Role, state.RunConfig) (agent.Driver, error) { return nil, nil }})
	if err != nil {
		b.Fatal(err)
	}
	r, err := g.Compile(graph.WithStore(st), graph.WithCodec(nodes.NewCodec()), graph.WithMerge(nodes.Merge))
	if err != nil {
		b.Fatal(err)
	}
	snap, err := r.State(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	return snap.State
}

func benchFile(b *testing.B, p, content string) {
	b.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

func benchCmd(b *testing.B, dir, name string, args ...string) {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
