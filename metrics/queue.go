package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// QueueProbe reads a run queue that other processes change too (serve's
// PostgreSQL queue, shared by every host of one database): how many jobs
// are queued, on every host, and how long the oldest of them has waited
// (0 when none is). It is an alias, so that a queue can offer one without
// importing this package.
type QueueProbe = func(ctx context.Context) (queued int, oldest time.Duration, err error)

// ProbeTimeout bounds one QueueProbe call: a scrape waits no longer for the
// queue's database.
const ProbeTimeout = 2 * time.Second

// probeEvery is how far apart two probes are at least: scrapes closer
// together share the figures of one.
const probeEvery = time.Second

// queueCollector collects gaffer_serve_queue_length, which the file pool
// sets (SetQueueLength) and a probe reads at scrape time, and
// gaffer_serve_queue_oldest_age_seconds, which only a probe reads: without
// one it has no series, since nothing measures it.
type queueCollector struct {
	length  prometheus.Gauge
	oldest  prometheus.Gauge
	now     func() time.Time
	timeout time.Duration // ProbeTimeout

	mu      sync.Mutex // held across a probe, so that concurrent scrapes make one
	probe   QueueProbe
	log     *slog.Logger
	last    time.Time // when the last probe started
	failing bool      // the last probe failed, and the log said so
}

func newQueueCollector() *queueCollector {
	return &queueCollector{
		length: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gaffer_serve_queue_length",
			Help: "Runs queued in gaffer serve, waiting for a worker or for their repository (one run per work tree at a time); on a database store, the queue every host shares.",
		}),
		oldest: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gaffer_serve_queue_oldest_age_seconds",
			Help: "How long the oldest run queued in the database store's queue (every host's) has waited, by the database's clock; 0 when none is queued.",
		}),
		now:     time.Now,
		timeout: ProbeTimeout,
	}
}

// Describe describes both gauges.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	c.length.Describe(ch)
	c.oldest.Describe(ch)
}

// Collect reads the queue through the probe, if there is one, and collects
// the gauges.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	if c.refresh() {
		c.oldest.Collect(ch)
	}
	c.length.Collect(ch)
}

// refresh calls the probe unless the last call is less than probeEvery
// old, and sets the gauges from it; a probe that fails leaves them as they
// were. It reports whether there is a probe.
func (c *queueCollector) refresh() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probe == nil {
		return false
	}
	now := c.now()
	if !c.last.IsZero() && now.Sub(c.last) < probeEvery && !now.Before(c.last) {
		return true
	}
	c.last = now
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	n, age, err := c.probe(ctx)
	if err != nil {
		if !c.failing {
			c.failing = true
			c.log.Warn("metrics: read the run queue; the queue's gauges keep their last values until it answers", "err", err)
		}
		return true
	}
	if c.failing {
		c.failing = false
		c.log.Info("metrics: the run queue answers again")
	}
	c.length.Set(float64(max(n, 0)))
	c.oldest.Set(max(age, 0).Seconds())
	return true
}

// ProbeQueue makes each scrape read gaffer_serve_queue_length and
// gaffer_serve_queue_oldest_age_seconds through probe, for a queue that
// other processes change too (serve's PostgreSQL queue calls it when it
// starts). Scrapes less than a second apart share one read. A probe that
// fails, or takes longer than ProbeTimeout, fails no scrape: the gauges
// keep their last values, and log gets one warning until the probe
// answers again (nil discards it). A nil probe stops the reads.
func (m *Metrics) ProbeQueue(probe QueueProbe, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := m.serve.queue
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probe, c.log, c.last, c.failing = probe, log, time.Time{}, false
}
