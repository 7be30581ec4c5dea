package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/examples/demo"
	"github.com/gaffer-dev/gaffer/profile"
)

// freePort returns a loopback address nobody listens on (for a moment).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// promQuery asks Prometheus for the value of an instant query with one
// series; ok is false when the query has no result yet.
func promQuery(t *testing.T, addr, query string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, false // not up yet
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", query, r.Error)
	}
	if len(r.Data.Result) != 1 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %q", query, s)
	}
	return v, true
}

// TestPrometheusScrapesServe runs a real Prometheus (Debian's prometheus
// package) scraping a real `gaffer serve` that runs the demo, and checks
// the phase counters through Prometheus's query API.
func TestPrometheusScrapesServe(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found: install it with `apt-get install -y prometheus` to run this test")
	}
	dir, _, script := demoRepo(t)
	s := startServe(t, bin, dir)

	tmp := t.TempDir()
	cfg := filepath.Join(tmp, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 250ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: gaffer
    static_configs:
      - targets: [%q]
`, s.metrics)), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freePort(t)
	prom := exec.Command(promBin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(tmp, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var promOut strings.Builder
	prom.Stdout, prom.Stderr = &promOut, &promOut
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = prom.Process.Signal(syscall.SIGKILL)
		_ = prom.Wait()
	}()

	const runID = "r-20260101-promet"
	out, code := gafferCmd(t, bin, "--repo", dir, "submit", "--goal", profile.PlanTitle(demo.Plan, "plan.md"), "--script", script,
		"--run-id", runID, "--auto-approve")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	v := waitStatus(t, bin, dir, runID, "completed", s)
	phases := float64(len(v.Phases))

	want := map[string]float64{
		`gaffer_phase_outcomes_total{job="gaffer",outcome="completed"}`: phases,
		// The demo's phase 2 is rejected once by its reviewer; phase 4
		// fails twice (go test, before any review), is replanned and
		// passes at attempt 3. Only the one review that ran and rejected
		// counts as a rejected verdict (issue 20: counts must be true).
		`gaffer_phase_outcomes_total{job="gaffer",outcome="retried"}`:   3,
		`gaffer_phase_outcomes_total{job="gaffer",outcome="halted"}`:    0,
		`gaffer_review_verdicts_total{job="gaffer",verdict="rejected"}`: 1,
		`gaffer_replans_total{job="gaffer",outcome="accepted"}`:         1,
		`gaffer_runs{job="gaffer",status="completed"}`:                  1,
		`gaffer_pending_approvals{job="gaffer"}`:                        0,
		// One session per lane of an attempt: phases 1 and 2 run two lanes,
		// phase 2's rejected task 2b once more; phase 4 three times.
		`sum(gaffer_agent_sessions_total{job="gaffer",role="developer"})`: 2 + 3 + 1 + 3,
	}
	deadline := time.Now().Add(90 * time.Second)
	for q, w := range want {
		for {
			got, ok := promQuery(t, promAddr, q)
			if ok && got == w {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus: %s = %v (have a result: %v), want %v\nprometheus:\n%s\n/metrics:\n%s",
					q, got, ok, w, promOut.String(), grepLines(scrape(t, s.metrics), "gaffer_"))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, s.output())
	}
}
