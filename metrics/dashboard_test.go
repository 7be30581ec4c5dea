package metrics

import (
	"encoding/json"
	"os"
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
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
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
	b, err := os.ReadFile("../examples/grafana/gaffer.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("gaffer.json is not valid JSON: %v", err)
	}
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
