package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
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
	n := 1000
	if v := os.Getenv("GAFFER_BENCH_RUNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("GAFFER_BENCH_RUNS=%q: %v", v, err)
		}
	}
	dir, plan, script := demoRepoB(b)
	if out, code := gafferB(b, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-000000"); code != 0 {
		b.Fatalf("run: exit %d\n%s", code, out)
	}
	ids := copyRuns(b, filepath.Join(dir, ".git", "gaffer"), "r-20260101-000000", n-1)
	branchRuns(b, dir, "r-20260101-000000", ids)
	bin := buildGafferB(b)
	// The first command after the copies checks the tables they wrote
	// (once: see GAFFER-VERIFIED) and compacts them; a store is not
	// listed right after 10,000 runs were written into it at once.
	if out, err := exec.Command(bin, "--repo", dir, "list").CombinedOutput(); err != nil {
		b.Fatalf("gaffer list: %v\n%s", err, out)
	}
	for _, cmd := range []string{"list", "status"} {
		b.Run(cmd, func(b *testing.B) {
			var rss int64
			for b.Loop() {
				c := exec.Command(bin, "--repo", dir, cmd)
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("gaffer %s: %v\n%s", cmd, err, out)
				}
				if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
					rss = max(rss, ru.Maxrss)
				}
			}
			b.ReportMetric(float64(rss)/1024, "peak-rss-MB")
		})
	}
}

// branchRuns gives each run of ids its branch gaffer/ID at the commit of
// run from's, as a run in its own work tree leaves it: list asks git
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
