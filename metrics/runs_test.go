package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gaffer-dev/gaffer/events"
)

// fakeRuns is a RunsProbe whose answers the test sets.
type fakeRuns struct {
	mu     sync.Mutex
	counts map[string]int
	err    error
	calls  int
}

func (f *fakeRuns) probe(ctx context.Context) (map[string]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.counts, f.err
}

func (f *fakeRuns) set(counts map[string]int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts, f.err = counts, err
}

// runsExposition is the gaffer_runs and gaffer_pending_approvals
// exposition for counts (the other statuses at 0) labelled store.
func runsExposition(store string, counts map[string]int) string {
	var b strings.Builder
	b.WriteString("# HELP gaffer_pending_approvals " + pendingHelp + "\n# TYPE gaffer_pending_approvals gauge\n")
	fmt.Fprintf(&b, "gaffer_pending_approvals{store=%q} %d\n", store, counts[statusAwaitingApproval])
	b.WriteString("# HELP gaffer_runs " + runsHelp + "\n# TYPE gaffer_runs gauge\n")
	for _, s := range sortedStatuses(counts) {
		fmt.Fprintf(&b, "gaffer_runs{status=%q,store=%q} %d\n", s, store, counts[s])
	}
	return b.String()
}

// sortedStatuses is runStatuses and the statuses of counts, sorted.
func sortedStatuses(counts map[string]int) []string {
	out := runStatuses()
	for s := range counts {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TestRunsGaugesFollowTheStore: without a probe the runs' gauges carry
// store="local" and count this process's runs; ProbeRuns labels them
// store="shared" and each scrape (a second apart or more) counts the
// store's runs through the probe. A probe that fails fails no scrape: the
// gauges keep their values and the log says so once. A nil probe makes
// them local again.
func TestRunsGaugesFollowTheStore(t *testing.T) {
	m, reg := newMetrics(t)
	now := time.Unix(1000, 0)
	m.runs.now = func() time.Time { return now }
	compare := func(store string, counts map[string]int) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(runsExposition(store, counts)),
			"gaffer_runs", "gaffer_pending_approvals"); err != nil {
			t.Fatal(err)
		}
	}
	compare(StoreLocal, nil)
	m.SetRuns(map[string]int{"running": 2, "completed": 1})
	m.ObserveRunStatus(events.RunStatus{From: "running", To: "awaiting_approval"})
	compare(StoreLocal, map[string]int{"running": 1, "completed": 1, "awaiting_approval": 1})

	var logBuf bytes.Buffer
	f := &fakeRuns{counts: map[string]int{"running": 4, "awaiting_approval": 2, "completed": 7}}
	m.ProbeRuns(f.probe, slog.New(slog.NewTextHandler(&logBuf, nil)))
	compare(StoreShared, f.counts)
	f.set(map[string]int{"running": 3, "awaiting_approval": 2, "completed": 8}, nil)
	compare(StoreShared, map[string]int{"running": 4, "awaiting_approval": 2, "completed": 7}) // the same second
	if f.calls != 1 {
		t.Fatalf("%d probes within a second, want 1", f.calls)
	}
	now = now.Add(time.Second)
	compare(StoreShared, f.counts)

	f.set(nil, errors.New("connection refused"))
	for range 3 {
		now = now.Add(time.Second)
		compare(StoreShared, map[string]int{"running": 3, "awaiting_approval": 2, "completed": 8})
	}
	if got := strings.Count(logBuf.String(), "level=WARN"); got != 1 || !strings.Contains(logBuf.String(), "connection refused") {
		t.Fatalf("%d warnings for 3 failed probes, want 1 naming the error:\n%s", got, logBuf.String())
	}
	f.set(map[string]int{"completed": 9}, nil)
	now = now.Add(time.Second)
	compare(StoreShared, map[string]int{"completed": 9})
	if !strings.Contains(logBuf.String(), "counted again") {
		t.Fatalf("no word of the probe answering again:\n%s", logBuf.String())
	}

	m.ProbeRuns(nil, nil)
	compare(StoreLocal, map[string]int{"completed": 9})
}

var _ prometheus.Collector = (*runMetrics)(nil)
