package metrics

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// metricInfo is what a reader of the docs needs of one metric.
type metricInfo struct {
	name   string
	typ    string // counter, gauge, histogram
	labels []string
	help   string
}

var (
	descHelpRE   = regexp.MustCompile(`help: "((?:[^"\\]|\\.)*)"`)
	descLabelsRE = regexp.MustCompile(`variableLabels: \{([^}]*)\}\}$`)
)

// catalog lists the metrics New registers, in registration order, read
// from the collectors' descriptors.
func catalog(t *testing.T) []metricInfo {
	t.Helper()
	m, _ := newMetrics(t)
	var out []metricInfo
	for _, c := range m.collectors() {
		var typ string
		switch c.(type) { // Gauge before Counter: a gauge has Inc and Add too
		case prometheus.Gauge, *prometheus.GaugeVec, *queueCollector, *runMetrics:
			typ = "gauge"
		case prometheus.Counter, *prometheus.CounterVec:
			typ = "counter"
		case prometheus.Histogram, *prometheus.HistogramVec:
			typ = "histogram"
		default:
			t.Fatalf("collector %T: which type of metric is it? Add it here", c)
		}
		ch := make(chan *prometheus.Desc, 4)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			s := d.String()
			name, help, labels := descNameRE.FindStringSubmatch(s), descHelpRE.FindStringSubmatch(s), descLabelsRE.FindStringSubmatch(s)
			if name == nil || help == nil || labels == nil {
				t.Fatalf("cannot read %s", s)
			}
			mi := metricInfo{name: name[1], typ: typ, help: help[1]}
			if labels[1] != "" {
				mi.labels = strings.Split(labels[1], ",")
			}
			out = append(out, mi)
		}
	}
	return out
}

// docEntry is one metric as a document lists it.
type docEntry struct {
	name, typ, meaning string
	labels             []string
	line               int
}

// checkListed compares the metrics a document lists with the registry:
// every registered metric once, with its labels (in the registry's order)
// and, when the document gives it, its type; nothing else. suggest
// formats the entry to add for a metric the document lacks.
func checkListed(t *testing.T, doc string, listed []docEntry, suggest func(metricInfo) string) {
	t.Helper()
	reg := catalog(t)
	byName := map[string]metricInfo{}
	for _, mi := range reg {
		byName[mi.name] = mi
	}
	seen := map[string]bool{}
	for _, e := range listed {
		mi, ok := byName[e.name]
		switch {
		case !ok:
			t.Errorf("%s:%d lists %s, which New does not register", doc, e.line, e.name)
			continue
		case seen[e.name]:
			t.Errorf("%s:%d lists %s again", doc, e.line, e.name)
		}
		seen[e.name] = true
		if !slices.Equal(e.labels, mi.labels) {
			t.Errorf("%s:%d: %s has labels %q, want %q", doc, e.line, e.name, e.labels, mi.labels)
		}
		if e.typ != "" && e.typ != mi.typ {
			t.Errorf("%s:%d: %s is a %s, not a %s", doc, e.line, e.name, mi.typ, e.typ)
		}
		if strings.TrimSpace(e.meaning) == "" {
			t.Errorf("%s:%d: %s says nothing of what it counts", doc, e.line, e.name)
		}
	}
	for _, mi := range reg {
		if !seen[mi.name] {
			t.Errorf("%s does not list %s; add:\n%s", doc, mi.name, suggest(mi))
		}
	}
}

// docLineRE is a line of doc.go's list: "//\tname{labels}  meaning".
var docLineRE = regexp.MustCompile(`^//\t(gaffer_[a-z0-9_]+)(?:\{([a-z0-9_,]*)\})?\s+(.*)$`)

// TestDocListsEveryMetric: doc.go's list is the registry's, so that it
// cannot drift from what New registers.
func TestDocListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var listed []docEntry
	inList := false
	for i, line := range strings.Split(string(b), "\n") {
		if line == "// # Metrics" {
			inList = true
			continue
		}
		if !inList {
			continue
		}
		if strings.HasPrefix(line, "// # ") || !strings.HasPrefix(line, "//") {
			break
		}
		sm := docLineRE.FindStringSubmatch(line)
		if sm == nil {
			continue
		}
		e := docEntry{name: sm[1], meaning: sm[3], line: i + 1}
		if sm[2] != "" {
			e.labels = strings.Split(sm[2], ",")
		}
		listed = append(listed, e)
	}
	if len(listed) == 0 {
		t.Fatal(`doc.go has no "# Metrics" list`)
	}
	checkListed(t, "doc.go", listed, func(mi metricInfo) string {
		name := mi.name
		if len(mi.labels) > 0 {
			name += "{" + strings.Join(mi.labels, ",") + "}"
		}
		return fmt.Sprintf("//\t%-48s %s", name, mi.help)
	})
}

// readmeHeader opens the README's table of metrics.
const readmeHeader = "| metric | type | labels | meaning |"

// TestReadmeTableListsEveryMetric: the README's table of metrics is the
// registry's, names, types and labels.
func TestReadmeTableListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, readmeHeader)
	if start < 0 {
		t.Fatalf("docs/operations.md has no table of metrics (a line %q)", readmeHeader)
	}
	var listed []docEntry
	for i := start + 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(lines[i], "|"), "|")
		if len(cells) != 4 {
			t.Errorf("docs/operations.md:%d: %d cells, want 4: %s", i+1, len(cells), lines[i])
			continue
		}
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		e := docEntry{name: strings.Trim(cells[0], "`"), typ: cells[1], meaning: cells[3], line: i + 1}
		if cells[2] != "" && cells[2] != "—" {
			for _, l := range strings.Split(cells[2], ",") {
				e.labels = append(e.labels, strings.Trim(strings.TrimSpace(l), "`"))
			}
		}
		listed = append(listed, e)
	}
	checkListed(t, "docs/operations.md", listed, func(mi metricInfo) string {
		labels := "—"
		if len(mi.labels) > 0 {
			labels = "`" + strings.Join(mi.labels, "`, `") + "`"
		}
		return fmt.Sprintf("| `%s` | %s | %s | %s |", mi.name, mi.typ, labels, mi.help)
	})
}
