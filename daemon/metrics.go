package daemon

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/metrics"
)

// NewMetrics makes a registry with gaffer's collectors and the Go and
// process collectors: a daemon's, or a single run's served with
// --metrics-addr.
func NewMetrics() (*prometheus.Registry, *metrics.Metrics, error) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	return reg, m, nil
}

// CountRuns counts svc's runs by status, for the runs gauge.
func CountRuns(ctx context.Context, svc host.Service) (map[string]int, error) {
	es, err := svc.List(ctx, host.ListRequest{})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, e := range es {
		counts[e.Status]++
	}
	return counts, nil
}
