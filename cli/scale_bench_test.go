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
	copyRuns(b, filepath.Join(dir, ".git", "gaffer"), "r-20260101-000000", n-1)
	bin := buildGafferB(b)
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

// copyRuns copies every checkpoint of run from under n new run ids.
func copyRuns(b *testing.B, storeDir, from string, n int) {
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
	for i := range n {
		id := fmt.Sprintf("r-%s-%06x", base.Add(time.Duration(i)*time.Minute).Format("20060102"), i+1)
		for j := len(cps) - 1; j >= 0; j-- { // oldest first
			cp := cps[j]
			cp.RunID = id
			if err := st.Put(ctx, cp, checkpoint.PutOptions{}); err != nil {
				b.Fatalf("copy %s seq %d: %v", id, cp.Seq, err)
			}
		}
	}
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
