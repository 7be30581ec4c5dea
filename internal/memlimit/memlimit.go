package memlimit

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Default is the soft memory limit of a process that drives one run:
// with it a 1,000-task run peaks at 121-141 MB RSS for 8-30% more CPU
// time, against 214-225 MB without (docs/performance.md).
const Default = 110 << 20

// Sustained is how many checks in a row the live heap must be over the
// limit before it is raised: a run's peaks (Badger's compactions) are
// collected through, a process that holds more for half a minute is
// given room.
const Sustained = 30

// governor decides the limit from the live heap it is shown, check by
// check: base, raised to half as much again as the live heap once that
// has stayed over the limit for Sustained checks (the collector then runs
// all the time, up to the half of the CPU the runtime lets it have), and
// lowered back (never under base) once the live heap is under half the
// limit.
type governor struct {
	base, limit uint64
	near        int // checks in a row the live heap was near the limit
}

// observe takes the live heap of one check and returns the limit.
func (g *governor) observe(live uint64) uint64 {
	switch {
	case live > g.limit:
		if g.near++; g.near >= Sustained {
			g.limit, g.near = live/2*3, 0
		}
	case live < g.limit/2 && g.limit > g.base:
		g.limit, g.near = max(g.base, live/2*3), 0
	default:
		g.near = 0
	}
	return g.limit
}

// Start sets the process's soft memory limit to base, unless getenv says
// GOMEMLIMIT is set (the runtime has then set the user's), and checks the
// live heap every period, moving the limit as governor says. stop puts
// the limit back as it was.
func Start(getenv func(string) string, base uint64, period time.Duration) (stop func()) {
	if getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	before := debug.SetMemoryLimit(int64(base))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		g := governor{base: base, limit: base}
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				continue
			}
			before := g.limit
			if next := g.observe(sample[0].Value.Uint64()); next != before {
				debug.SetMemoryLimit(int64(next))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			debug.SetMemoryLimit(before)
		})
	}
}
