package metrics

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

type dashboard struct {
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("../examples/grafana/gaffer.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("gaffer.json is not valid JSON: %v", err)
	}
	return d
}

var (
	metricNameRE = regexp.MustCompile(`gaffer_[a-z0-9_]+`)
	descNameRE   = regexp.MustCompile(`fqName: "([^"]+)"`)
)

// registeredNames lists the metric names m's collectors describe, with the
// series names a histogram adds.
func registeredNames(t *testing.T, m *Metrics) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, c := range m.collectors() {
		ch := make(chan *prometheus.Desc, 4)
		go func() { c.Describe(ch); close(ch) }()
		_, isHist := c.(prometheus.Histogram)
		_, isHistVec := c.(*prometheus.HistogramVec)
		for d := range ch {
			sm := descNameRE.FindStringSubmatch(d.String())
			if sm == nil {
				t.Fatalf("cannot read the name of %s", d)
			}
			names[sm[1]] = true
			if isHist || isHistVec {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[sm[1]+s] = true
				}
			}
		}
	}
	return names
}

func TestGrafanaDashboard(t *testing.T) {
	d := readDashboard(t)
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard lacks a title, uid or panels: %+v", d)
	}
	m, _ := newMetrics(t)
	names := registeredNames(t, m)
	used := map[string]bool{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			found := metricNameRE.FindAllString(tg.Expr, -1)
			if len(found) == 0 {
				t.Errorf("panel %q queries no gaffer metric: %s", p.Title, tg.Expr)
			}
			for _, n := range found {
				if !names[n] {
					t.Errorf("panel %q queries %s, which the registry does not have", p.Title, n)
				}
				used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
			}
		}
	}
	// Every metric family should be on the dashboard somewhere.
	for n := range names {
		if strings.HasSuffix(n, "_bucket") || strings.HasSuffix(n, "_sum") || strings.HasSuffix(n, "_count") {
			continue
		}
		if !used[n] {
			t.Errorf("metric %s is not on the dashboard", n)
		}
	}
}

// queueRulesTest is a promtool rules test of the dashboard's queued
// figure ($EXPR): two hosts of one database report the same shared queue
// of 3, two file pools their own queues of 2 and 1. It counts the shared
// queue once and the file pools' queues each: 6, 3 with the database
// hosts alone, 2 with one file pool alone.
const queueRulesTest = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="a:9464",queue="shared"}', values: '3 3'}
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="b:9464",queue="shared"}', values: '3 3'}
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="c:9464",queue="local"}', values: '2 2'}
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="d:9464",queue="local"}', values: '1 1'}
  promql_expr_test:
  - {expr: queued, eval_time: 1m, exp_samples: [{labels: queued, value: 6}]}
- interval: 1m
  input_series:
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="a:9464",queue="shared"}', values: '3 3'}
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="b:9464",queue="shared"}', values: '3 3'}
  promql_expr_test:
  - {expr: queued, eval_time: 1m, exp_samples: [{labels: queued, value: 3}]}
- interval: 1m
  input_series:
  - {series: 'gaffer_serve_queue_length{job="gaffer",instance="c:9464",queue="local"}', values: '2 2'}
  promql_expr_test:
  - {expr: queued, eval_time: 1m, exp_samples: [{labels: queued, value: 2}]}
`

// runsRulesTest is a promtool rules test of the dashboard's runs by
// status ($EXPR, recorded as "runs"): two hosts of one database report
// the same shared store (2 running, 5 completed), two store directories
// their own runs. It counts the shared store once.
const runsRulesTest = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - {series: 'gaffer_runs{job="gaffer",instance="a:9464",status="running",store="shared"}', values: '2 2'}
  - {series: 'gaffer_runs{job="gaffer",instance="a:9464",status="completed",store="shared"}', values: '5 5'}
  - {series: 'gaffer_runs{job="gaffer",instance="b:9464",status="running",store="shared"}', values: '2 2'}
  - {series: 'gaffer_runs{job="gaffer",instance="b:9464",status="completed",store="shared"}', values: '5 5'}
  - {series: 'gaffer_runs{job="gaffer",instance="c:9464",status="running",store="local"}', values: '1 1'}
  - {series: 'gaffer_runs{job="gaffer",instance="c:9464",status="completed",store="local"}', values: '3 3'}
  - {series: 'gaffer_runs{job="gaffer",instance="d:9464",status="running",store="local"}', values: '1 1'}
  - {series: 'gaffer_runs{job="gaffer",instance="d:9464",status="completed",store="local"}', values: '0 0'}
  promql_expr_test:
  - eval_time: 1m
    expr: runs
    exp_samples:
    - {labels: 'runs{status="running"}', value: 4}
    - {labels: 'runs{status="completed"}', value: 8}
- interval: 1m
  input_series:
  - {series: 'gaffer_runs{job="gaffer",instance="a:9464",status="running",store="shared"}', values: '2 2'}
  - {series: 'gaffer_runs{job="gaffer",instance="b:9464",status="running",store="shared"}', values: '2 2'}
  promql_expr_test:
  - {expr: runs, eval_time: 1m, exp_samples: [{labels: 'runs{status="running"}', value: 2}]}
- interval: 1m
  input_series:
  - {series: 'gaffer_runs{job="gaffer",instance="c:9464",status="running",store="local"}', values: '1 1'}
  - {series: 'gaffer_runs{job="gaffer",instance="d:9464",status="running",store="local"}', values: '1 1'}
  promql_expr_test:
  - {expr: runs, eval_time: 1m, exp_samples: [{labels: 'runs{status="running"}', value: 2}]}
`

// pendingRulesTest is a promtool rules test of the dashboard's pending
// approvals ($EXPR, recorded as "pending"): two hosts of one database
// report the same 3, two store directories 2 and 1: 6.
const pendingRulesTest = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - {series: 'gaffer_pending_approvals{job="gaffer",instance="a:9464",store="shared"}', values: '3 3'}
  - {series: 'gaffer_pending_approvals{job="gaffer",instance="b:9464",store="shared"}', values: '3 3'}
  - {series: 'gaffer_pending_approvals{job="gaffer",instance="c:9464",store="local"}', values: '2 2'}
  - {series: 'gaffer_pending_approvals{job="gaffer",instance="d:9464",store="local"}', values: '1 1'}
  promql_expr_test:
  - {expr: pending, eval_time: 1m, exp_samples: [{labels: pending, value: 6}]}
- interval: 1m
  input_series:
  - {series: 'gaffer_pending_approvals{job="gaffer",instance="a:9464",store="shared"}', values: '3 3'}
  - {series: 'gaffer_pending_approvals{job="gaffer",instance="b:9464",store="shared"}', values: '3 3'}
  promql_expr_test:
  - {expr: pending, eval_time: 1m, exp_samples: [{labels: pending, value: 3}]}
`

// dashboardExpr is the query of the dashboard's target with legend legend
// that queries metric.
func dashboardExpr(t *testing.T, legend, metric string) string {
	t.Helper()
	for _, p := range readDashboard(t).Panels {
		for _, tg := range p.Targets {
			if tg.LegendFormat == legend && strings.Contains(tg.Expr, metric) {
				return tg.Expr
			}
		}
	}
	t.Fatalf("no target with legend %q queries %s", legend, metric)
	return ""
}

// promtoolRules records expr as record and runs the promtool rules test
// test on it; it skips when promtool is not installed.
func promtoolRules(t *testing.T, record, expr, test string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: install it with `apt-get install -y prometheus` to evaluate the query")
	}
	dir := t.TempDir()
	q, _ := json.Marshal(expr)
	rules := "groups:\n- name: dashboard\n  rules:\n  - record: " + record + "\n    expr: " + string(q) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.yml"), []byte(test), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s\nquery: %s", err, out, expr)
	}
}

// TestGrafanaQueueCountsASharedQueueOnce: the dashboard's queued figure
// sums the file pools' own queues and counts a database's shared queue
// once, however many hosts report it (checked by promtool, when it is
// installed).
func TestGrafanaQueueCountsASharedQueueOnce(t *testing.T) {
	promtoolRules(t, "queued", dashboardExpr(t, "queued", "gaffer_serve_queue_length"), queueRulesTest)
}

// TestGrafanaRunsCountASharedStoreOnce: the dashboard's runs by status
// and pending approvals sum the store directories' runs and count a
// database store's once, however many hosts report it (checked by
// promtool, when it is installed).
func TestGrafanaRunsCountASharedStoreOnce(t *testing.T) {
	t.Run("runs", func(t *testing.T) {
		promtoolRules(t, "runs", dashboardExpr(t, "{{status}}", "gaffer_runs"), runsRulesTest)
	})
	t.Run("pending", func(t *testing.T) {
		promtoolRules(t, "pending", dashboardExpr(t, "pending", "gaffer_pending_approvals"), pendingRulesTest)
	})
}
