package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/workspace"
)

// BenchmarkListManyRuns times the real binary's `list` and `status` on a
// store of GAFFER_BENCH_RUNS runs (default 1,000, so that `make bench`
// stays practical; the 10,000-run figure is measured with the variable)
// and reports their peak RSS. The store is made once: a real run of the demo plan to its
// end, whose checkpoints are then copied under as many run ids.
//
//	go test -run '^$' -bench ListManyRuns -benchtime 5x ./cli
//	GAFFER_BENCH_RUNS=10000 go test -run '^$' -bench ListManyRuns -benchtime 1x -timeout 30m ./cli
func BenchmarkListManyRuns(b *testing.B) {
	n := benchRuns(b)
	sp := startSpawner(b) // before the setup makes this process large
	dir, plan, script := demoRepoB(b)
	if out, code := gafferB(b, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-000000"); code != 0 {
		b.Fatalf("run: exit %d\n%s", code, out)
	}
	ids := copyRuns(b, filepath.Join(dir, ".git", "gaffer"), "r-20260101-000000", n-1)
	branchRuns(b, dir, "r-20260101-000000", ids)
	bin := buildGafferB(b)
	// The first command after the copies checks the tables they wrote,
	// once (see GAFFER-VERIFIED). Then the store is on disk, as a store
	// used for a while is: closing a table syncs its file, which waits
	// for the copies' writes still in the page cache.
	sp.run(b, bin, "--repo", dir, "list")
	syscall.Sync()
	for _, cmd := range []string{"list", "status"} {
		b.Run(cmd, func(b *testing.B) {
			var rss int64
			var walls []time.Duration
			for b.Loop() {
				r := sp.run(b, bin, "--repo", dir, cmd)
				rss = max(rss, r.MaxRSS)
				walls = append(walls, r.Wall)
			}
			b.ReportMetric(float64(rss)/1024, "peak-rss-MB")
			// ns/op is the mean of the round trips through the spawner;
			// the command's own wall time, as the spawner saw it, is
			// reported as its median and 90th percentile.
			slices.Sort(walls)
			b.ReportMetric(float64(walls[len(walls)/2])/1e6, "median-ms")
			b.ReportMetric(float64(walls[len(walls)*9/10])/1e6, "p90-ms")
		})
	}
}

// spawner runs a benchmark's commands from a process that stays small. A
// command started by the benchmark's own process, which its setup made
// large, is charged that size in its peak RSS (ru_maxrss counts the
// parent's memory the child shares until it execs).
type spawner struct {
	in  io.Writer
	out *bufio.Scanner
}

// spawned is the spawner's answer for one command.
type spawned struct {
	MaxRSS int64         // KiB
	Wall   time.Duration // from its start to its exit
	Out    string        // its standard error
	Err    string
}

func startSpawner(b *testing.B) *spawner {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchSpawner$")
	cmd.Env = append(os.Environ(), "GAFFER_BENCH_SPAWNER=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	return &spawner{in: in, out: sc}
}

// run runs args and returns what the spawner saw of it; a failure fails
// b.
func (s *spawner) run(b *testing.B, args ...string) spawned {
	b.Helper()
	line, _ := json.Marshal(args)
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		b.Fatal(err)
	}
	for s.out.Scan() {
		var r spawned
		if json.Unmarshal(s.out.Bytes(), &r) != nil {
			continue // the test binary's own lines
		}
		if r.Err != "" {
			b.Fatalf("%v: %s\n%s", args, r.Err, r.Out)
		}
		return r
	}
	b.Fatalf("the spawner ended: %v", s.out.Err())
	return spawned{}
}

// TestBenchSpawner is the spawner's process (GAFFER_BENCH_SPAWNER=1): it
// runs each command given on stdin, as a JSON array, and answers with a
// spawned line.
func TestBenchSpawner(t *testing.T) {
	if os.Getenv("GAFFER_BENCH_SPAWNER") != "1" {
		t.Skip("the benchmarks' command runner (startSpawner)")
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var args []string
		if err := json.Unmarshal(in.Bytes(), &args); err != nil || len(args) == 0 {
			t.Fatalf("spawner: %q: %v", in.Bytes(), err)
		}
		// Standard output goes to /dev/null, as a listing's 1.4 MB would
		// otherwise cross two more processes (here, then the benchmark's,
		// in JSON) inside the time measured.
		c := exec.Command(args[0], args[1:]...)
		var errOut bytes.Buffer
		c.Stderr = &errOut
		start := time.Now()
		err := c.Run()
		r := spawned{Wall: time.Since(start), Out: errOut.String()}
		if err != nil {
			r.Err = err.Error()
		}
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok && c.ProcessState != nil {
			r.MaxRSS = ru.Maxrss
		}
		line, _ := json.Marshal(r)
		fmt.Printf("%s\n", line)
	}
}

// branchRuns gives each run of ids its branch gaffer/ID at the commit of
// run from's, as runs in their own work trees leave them: list asks git
// which of them hold unmerged work.
func branchRuns(b *testing.B, dir, from string, ids []string) {
	tip, err := exec.Command("git", "-C", dir, "rev-parse", "refs/heads/gaffer/"+from).Output()
	if err != nil {
		b.Fatalf("the branch of %s: %v", from, err)
	}
	var in strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&in, "create refs/heads/gaffer/%s %s\n", id, strings.TrimSpace(string(tip)))
	}
	cmd := exec.Command("git", "-C", dir, "update-ref", "--stdin")
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git update-ref: %v\n%s", err, out)
	}
	// As the runs' own starts leave them: AddWorkTree packs the refs once
	// LooseBranchesToPack branches are loose.
	repo, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := repo.PackLooseBranches(context.Background(), strings.TrimSuffix(host.ForkBranchPrefix, "/"), workspace.LooseBranchesToPack); err != nil {
		b.Fatal(err)
	}
}

// copyRuns copies every checkpoint of run from under n new run ids, and
// returns them.
func copyRuns(b *testing.B, storeDir, from string, n int) []string {
	ctx := context.Background()
	st, err := badger.Open(storeDir, badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cps, err := st.List(ctx, from, checkpoint.ListOptions{})
	if err != nil || len(cps) == 0 {
		b.Fatalf("checkpoints of %s: %d, %v", from, len(cps), err)
	}
	// The runs' summaries: the store keeps the latest checkpoint's with
	// the run, and List does not return it.
	infos, err := st.Runs(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var summary []byte
	for _, in := range infos {
		if in.RunID == from {
			summary = in.Summary
		}
	}
	if summary == nil {
		b.Fatalf("run %s has no summary", from)
	}
	cps[0].Summary = summary
	base := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("r-%s-%06x", base.Add(time.Duration(i)*time.Minute).Format("20060102"), i+1)
		ids[i] = id
		for j := len(cps) - 1; j >= 0; j-- { // oldest first
			cp := cps[j]
			cp.RunID = id
			if err := st.Put(ctx, cp, checkpoint.PutOptions{}); err != nil {
				b.Fatalf("copy %s seq %d: %v", id, cp.Seq, err)
			}
		}
	}
	return ids
}

func demoRepoB(b *testing.B) (dir, plan, script string) {
	parent := os.Getenv("GAFFER_BENCH_DIR") // kept after the run, to look at
	if parent == "" {
		parent = b.TempDir()
	}
	dir, err := SetupDemo(context.Background(), filepath.Join(parent, "calc"))
	if err != nil {
		b.Fatal(err)
	}
	sd := filepath.Join(dir, ".git", "gaffer-demo")
	return dir, filepath.Join(sd, "plan.md"), filepath.Join(sd, "script.yaml")
}

func gafferB(b *testing.B, args ...string) (string, int) {
	var buf bytes.Buffer
	app := NewWithIO("test", IO{In: strings.NewReader(""), Out: &buf, Err: &buf, Terminal: func() bool { return false }})
	err := app.RunContext(context.Background(), append([]string{"gaffer"}, args...))
	Report(&buf, err)
	return buf.String(), ExitCode(err)
}

func buildGafferB(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "gaffer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gaffer")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}
