package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/control"
)

// BenchmarkMCPRunStatus times an MCP run_status round trip, the SDK's
// client to the real binary's `gaffer mcp` over stdio, on a store of
// GAFFER_BENCH_RUNS runs (default 1,000; made as BenchmarkListManyRuns
// makes its store): with no process holding the store (each call opens it
// read-only, as `gaffer status` does), and with a `gaffer serve` holding
// it (each call asks serve on its socket). It reports the median and 90th
// percentile; the goal is a median under 20 ms.
//
//	go test -run '^$' -bench MCPRunStatus -benchtime 200x ./cli
func BenchmarkMCPRunStatus(b *testing.B) {
	n := benchRuns(b)
	dir, plan, script := demoRepoB(b)
	const id = "r-20260101-000000"
	if out, code := gafferB(b, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", id); code != 0 {
		b.Fatalf("run: exit %d\n%s", code, out)
	}
	ids := copyRuns(b, filepath.Join(dir, ".git", "gaffer"), id, n-1)
	branchRuns(b, dir, id, ids)
	bin := buildGafferB(b)
	if out, err := exec.Command(bin, "--repo", dir, "list").CombinedOutput(); err != nil { // checks the copied tables once
		b.Fatalf("list: %v\n%s", err, out)
	}
	syscall.Sync()
	status := func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(b.Context(), &mcp.CommandTransport{Command: exec.Command(bin, "--repo", dir, "mcp")}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &mcp.CallToolParams{Name: "run_status", Arguments: map[string]any{"run_id": ids[len(ids)/2]}}
		var walls []time.Duration
		for b.Loop() {
			start := time.Now()
			res, err := cs.CallTool(b.Context(), params)
			walls = append(walls, time.Since(start))
			if err != nil || res.IsError {
				b.Fatalf("run_status: %v %v", err, res)
			}
		}
		slices.Sort(walls)
		b.ReportMetric(float64(walls[len(walls)/2])/1e6, "median-ms")
		b.ReportMetric(float64(walls[len(walls)*9/10])/1e6, "p90-ms")
	}
	b.Run("store", status)
	b.Run("serve", func(b *testing.B) {
		serve := exec.Command(bin, "--repo", dir, "serve")
		if err := serve.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() }()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(control.SocketPath(filepath.Join(dir, ".git", "gaffer"))); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("serve did not open its socket")
			}
		}
		status(b)
	})
}
