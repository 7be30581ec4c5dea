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

// The values of the queue label of the queue gauges: whose queue they
// measure.
const (
	// QueueLocal is a queue this process holds (serve's file pool): each
	// process has its own, so sum them across processes.
	QueueLocal = "local"
	// QueueShared is a queue other processes change too, read through a
	// QueueProbe (serve's PostgreSQL queue): every host of one database
	// reports the same one, so take the max across them.
	QueueShared = "shared"
)

// queueCollector collects gaffer_serve_queue_length and
// gaffer_serve_queue_oldest_age_seconds, labelled queue="local" when the
// file pool sets them (SetQueueLength, SetQueueOldest) and queue="shared"
// when a probe reads them at scrape time. The oldest job's age has no
// series until something measures it: the pool's first SetQueueOldest, or
// a probe.
type queueCollector struct {
	lengthDesc *prometheus.Desc
	oldestDesc *prometheus.Desc
	sharedRead[queueFigures]

	vmu      sync.Mutex // guards the values; never held across a probe
	length   float64
	since    time.Time // SetQueueOldest's: when the oldest queued job began to wait
	hasSince bool      // SetQueueOldest was called
	age      float64   // the probe's oldest age, in seconds
}

// queueFigures are what a QueueProbe reads.
type queueFigures struct {
	queued int
	oldest time.Duration
}

func newQueueCollector() *queueCollector {
	return &queueCollector{
		sharedRead: newSharedRead[queueFigures]("metrics: read the run queue; the queue's gauges keep their last values until it answers",
			"metrics: the run queue answers again"),
		lengthDesc: prometheus.NewDesc("gaffer_serve_queue_length",
			"Runs queued in gaffer serve, waiting for a worker or for their repository (one run per work tree at a time), by queue: local (the file pool's own; sum across processes) or shared (a database store's, every host's; max across hosts).",
			[]string{"queue"}, nil),
		oldestDesc: prometheus.NewDesc("gaffer_serve_queue_oldest_age_seconds",
			"How long the oldest run queued in gaffer serve has waited since it was submitted, answered or put back, by queue (local: by this process's clock; shared: every host's, by the database's clock); 0 when none is queued.",
			[]string{"queue"}, nil),
	}
}

// Describe describes both gauges.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lengthDesc
	ch <- c.oldestDesc
}

// Collect reads the queue through the probe, if there is one, and collects
// the gauges.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	shared := c.refresh()
	now := c.now()
	c.vmu.Lock()
	length, age, hasAge := c.length, c.age, shared
	if !shared && c.hasSince {
		age, hasAge = 0, true
		if !c.since.IsZero() {
			age = max(now.Sub(c.since), 0).Seconds()
		}
	}
	c.vmu.Unlock()
	queue := QueueLocal
	if shared {
		queue = QueueShared
	}
	gaugeTo(ch, c.lengthDesc, length, queue)
	if hasAge {
		gaugeTo(ch, c.oldestDesc, age, queue)
	}
}

// gaugeTo sends one gauge sample of desc with the label values lv.
func gaugeTo(ch chan<- prometheus.Metric, desc *prometheus.Desc, v float64, lv ...string) {
	if m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, lv...); err == nil {
		ch <- m
	}
}

// setLength sets the queue length.
func (c *queueCollector) setLength(n int) {
	c.vmu.Lock()
	defer c.vmu.Unlock()
	c.length = float64(max(n, 0))
}

// setOldest sets when the oldest job of a local queue began to wait.
func (c *queueCollector) setOldest(since time.Time) {
	c.vmu.Lock()
	defer c.vmu.Unlock()
	c.since, c.hasSince = since, true
}

// refresh reads the queue through the probe (sharedRead.refresh) and
// sets the gauges from it. It reports whether there is a probe.
func (c *queueCollector) refresh() bool {
	return c.sharedRead.refresh(func(f queueFigures) {
		c.vmu.Lock()
		defer c.vmu.Unlock()
		c.length = float64(max(f.queued, 0))
		c.age = max(f.oldest, 0).Seconds()
	})
}

// ProbeQueue makes each scrape read gaffer_serve_queue_length and
// gaffer_serve_queue_oldest_age_seconds through probe, for a queue that
// other processes change too (serve's PostgreSQL queue calls it when it
// starts); the gauges are labelled queue="shared" while it reads them. Scrapes less than a second apart share one read. A probe that
// fails, or takes longer than ProbeTimeout, fails no scrape: the gauges
// keep their last values, and log gets one warning until the probe
// answers again (nil discards it). A nil probe stops the reads.
func (m *Metrics) ProbeQueue(probe QueueProbe, log *slog.Logger) {
	var read func(context.Context) (queueFigures, error)
	if probe != nil {
		read = func(ctx context.Context) (queueFigures, error) {
			n, oldest, err := probe(ctx)
			return queueFigures{n, oldest}, err
		}
	}
	m.serve.queue.setRead(read, log)
}
