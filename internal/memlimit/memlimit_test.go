package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestGovernor: a spike shorter than Sustained checks leaves the limit;
// a live heap that stays near it raises it; once the heap is down again
// the limit comes back, never under the base.
func TestGovernor(t *testing.T) {
	g := governor{base: 100, limit: 100}
	for range Sustained - 1 {
		if got := g.observe(150); got != 100 {
			t.Fatalf("limit %d during a spike, want 100", got)
		}
	}
	if got := g.observe(50); got != 100 {
		t.Fatalf("limit %d after the spike, want 100", got)
	}
	var got uint64
	for range Sustained {
		got = g.observe(150)
	}
	if got != 225 {
		t.Fatalf("limit %d after %d checks at 150, want 225", got, Sustained)
	}
	if got := g.observe(150); got != 225 {
		t.Fatalf("limit %d, want it kept at 225", got)
	}
	if got := g.observe(120); got != 225 {
		t.Fatalf("limit %d with the live heap at 120 of 225, want it kept", got)
	}
	if got := g.observe(80); got != 120 {
		t.Fatalf("limit %d with the live heap down at 80, want 120", got)
	}
	if got := g.observe(10); got != 100 {
		t.Fatalf("limit %d with the live heap at 10, want the base", got)
	}
}

// current is the soft memory limit now.
func current() int64 { return debug.SetMemoryLimit(-1) }

// TestStartSetsRaisesAndRestores: Start sets the limit, raises it when the
// live heap nears it, and stop puts back the one before; with GOMEMLIMIT
// set it changes nothing.
func TestStartSetsRaisesAndRestores(t *testing.T) {
	before := current()
	stop := Start(func(string) string { return "" }, 1<<20, 5*time.Millisecond)
	if got := current(); got != 1<<20 {
		t.Fatalf("limit %d after Start, want %d", got, 1<<20)
	}
	hold := make([][]byte, 0, 64) // a live heap of 8 MiB, over the 1 MiB limit
	for range 64 {
		hold = append(hold, make([]byte, 128<<10))
	}
	deadline := time.Now().Add(10 * time.Second)
	for current() <= 1<<20 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if got := current(); got <= 8<<20 {
		t.Errorf("limit %d with a live heap of 8 MiB, want it raised above", got)
	}
	runtime.KeepAlive(hold)
	stop()
	stop()
	if got := current(); got != before {
		t.Errorf("limit %d after stop, want %d", got, before)
	}

	stop = Start(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}, 1<<20, time.Millisecond)
	defer stop()
	if got := current(); got != before {
		t.Errorf("limit %d with GOMEMLIMIT set, want it left at %d", got, before)
	}
}
