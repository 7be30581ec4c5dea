package pgqueue

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// QueueProber is the optional part of Config.Gauges that reads the queue
// at scrape time (metrics.Metrics implements it). The queue is every
// host's, so no host can count it as its own jobs come and go: a started
// Queue hands Probe to ProbeQueue, and the queue's length and the age of
// its oldest job are read from the jobs table when they are asked for.
// SetWorkers still counts this host's workers and the jobs executing here.
type QueueProber interface {
	ProbeQueue(probe func(ctx context.Context) (queued int, oldest time.Duration, err error), log *slog.Logger)
}

// probeSQL counts the jobs queued for any host and measures how long the
// oldest has waited, by the database's clock; the jobs_queued index holds
// exactly those rows.
const probeSQL = `SELECT count(*), coalesce(extract(epoch FROM now() - min(queued_at)), 0)::float8
	FROM jobs WHERE state = 'queued'`

// Probe reads how many jobs are queued, for every host, and how long the
// oldest has waited since it was queued (submitted, answered, or released
// by a drain or a retry); 0 when none is. ctx bounds the query.
func (q *Queue) Probe(ctx context.Context) (queued int, oldest time.Duration, err error) {
	var secs float64
	if err := q.cfg.DB.QueryRow(ctx, probeSQL).Scan(&queued, &secs); err != nil {
		return 0, 0, fmt.Errorf("pgqueue: read the queue: %w", err)
	}
	return queued, time.Duration(max(secs, 0) * float64(time.Second)), nil
}

// probeGauges hands Probe to the gauges that read the queue themselves.
func (q *Queue) probeGauges() {
	if p, ok := q.cfg.Gauges.(QueueProber); ok {
		p.ProbeQueue(q.Probe, q.cfg.Logger)
	}
}
