package metrics

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// RunsProbe counts the runs of a store that other processes change too
// (a PostgreSQL store, shared by every host of one database), by status.
// It is an alias, so that a caller can offer one without naming a type of
// this package.
type RunsProbe = func(ctx context.Context) (map[string]int, error)

// The values of the store label of gaffer_runs and
// gaffer_pending_approvals: whose runs they count.
const (
	// StoreLocal is a store this process counts on its own (a store
	// directory, which one process holds): sum across processes.
	StoreLocal = "local"
	// StoreShared is a store other processes change too, read through a
	// RunsProbe (a database store): every host of one database reports
	// the same runs, so take the max across them.
	StoreShared = "shared"
)

// The help of gaffer_runs and gaffer_pending_approvals.
const (
	runsHelp    = "Workflow runs, by status and store: local (the runs this process knows of; sum across processes) or shared (a database store's, every host's, counted when scraped; max across hosts)."
	pendingHelp = "Runs waiting for a human to approve or reject their plan, by store (local: sum across processes; shared: max across the hosts of one database)."
)

// runMetrics collects gaffer_runs and gaffer_pending_approvals, labelled
// store="local" while the process counts its runs itself (SetRuns, then
// the run_status events) and store="shared" once a probe reads them from
// the store at scrape time (ProbeRuns).
type runMetrics struct {
	byState *prometheus.GaugeVec // by status and store
	pending *prometheus.GaugeVec // by store
	sharedRead[map[string]int]

	mu     sync.Mutex // guards counts and store; never held across a probe
	counts map[string]int
	store  string
}

func newRunMetrics() *runMetrics {
	return &runMetrics{
		byState: newGaugeVec("gaffer_runs", runsHelp, "status", "store"),
		pending: newGaugeVec("gaffer_pending_approvals", pendingHelp, "store"),
		sharedRead: newSharedRead[map[string]int]("metrics: count the store's runs; the runs' gauges keep their last values until it answers",
			"metrics: the store's runs can be counted again"),
		counts: map[string]int{},
		store:  StoreLocal,
	}
}

// Describe describes both gauges.
func (r *runMetrics) Describe(ch chan<- *prometheus.Desc) {
	r.byState.Describe(ch)
	r.pending.Describe(ch)
}

// Collect reads the runs through the probe, if there is one, and collects
// the gauges.
func (r *runMetrics) Collect(ch chan<- prometheus.Metric) {
	r.refresh()
	r.byState.Collect(ch)
	r.pending.Collect(ch)
}

// preset creates the series of every status at zero; the caller holds mu
// or owns r alone.
func (r *runMetrics) preset() {
	for _, s := range runStatuses() {
		r.byState.WithLabelValues(s, r.store)
	}
	r.pending.WithLabelValues(r.store)
}

// set replaces the counts; the caller holds mu.
func (r *runMetrics) set(counts map[string]int) {
	old := r.counts
	r.counts = make(map[string]int, len(counts))
	for k, v := range counts {
		if v > 0 {
			r.counts[k] = v
		}
	}
	keys := make([]string, 0, len(old)+len(counts))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range counts {
		keys = append(keys, k)
	}
	r.publish(keys...)
}

// publish copies the counts of the statuses named into the gauges; the
// caller holds mu.
func (r *runMetrics) publish(statuses ...string) {
	for _, s := range statuses {
		if s != "" {
			r.byState.WithLabelValues(s, r.store).Set(float64(r.counts[s]))
		}
	}
	r.pending.WithLabelValues(r.store).Set(float64(r.counts[statusAwaitingApproval]))
}

// relabel moves the gauges to the store label value store; the caller
// holds mu.
func (r *runMetrics) relabel(store string) {
	if r.store == store {
		return
	}
	r.store = store
	r.byState.Reset()
	r.pending.Reset()
	r.preset()
	keys := make([]string, 0, len(r.counts))
	for k := range r.counts {
		keys = append(keys, k)
	}
	r.publish(keys...)
}

// refresh counts the runs through the probe (sharedRead.refresh) and
// sets the counts from it.
func (r *runMetrics) refresh() {
	r.sharedRead.refresh(func(counts map[string]int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.set(counts)
	})
}

// SetRuns replaces the run counts by status, for a process that finds runs
// in its store when it starts.
func (m *Metrics) SetRuns(counts map[string]int) {
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	m.runs.set(counts)
}

// ProbeRuns makes each scrape count gaffer_runs and
// gaffer_pending_approvals through probe, for a store that other
// processes change too (gaffer serve calls it on a database store), and
// labels them store="shared" while it does. Between scrapes the
// run_status events still move this process's runs. Scrapes less than a
// second apart share one count. A probe that fails, or takes longer than
// ProbeTimeout, fails no scrape: the gauges keep their last values, and
// log gets one warning until the probe answers again (nil discards it).
// A nil probe stops the reads and labels the gauges store="local" again.
func (m *Metrics) ProbeRuns(probe RunsProbe, log *slog.Logger) {
	r := m.runs
	r.setRead(probe, log)
	store := StoreLocal
	if probe != nil {
		store = StoreShared
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.relabel(store)
}
