package nodes

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// allocWarmSteps is how many steps of the growth workload run before
// the measured ones (the plan's first checkpoints write every chunk);
// allocSteps and allocFewSteps are the two lengths of the measured
// resumes, whose difference leaves out what a resume costs once
// (opening the run, decoding its state).
const (
	allocWarmSteps = 6
	allocFewSteps  = 6
	allocSteps     = 20
)

// resumeAlloc runs allocWarmSteps steps of the growth workload
// (growthGraph: each step changes one phase state and a few counters, as
// the workflow's nodes do, through the workflow's codec and a real Badger
// store) of a plan of n phases, then resumes it for steps more steps and
// returns the bytes the process allocated during the resume, counted by
// the runtime (TotalAlloc), not timed.
func resumeAlloc(tb testing.TB, n, steps int) uint64 {
	tb.Helper()
	ctx := context.Background()
	store, err := badger.Open(tb.TempDir(), badger.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer store.Close()
	opts := []graph.Option{graph.WithStore(store), graph.WithDurability(graph.Async), graph.WithCodec(NewCodec()),
		graph.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) })}
	warm := growthGraph(tb, append(opts, graph.WithStepLimit(allocWarmSteps))...)
	if _, err := warm.Run(ctx, "r-growth", growthState(tb, n)); !errors.Is(err, graph.ErrStepLimit) {
		tb.Fatalf("warm-up: %v, want the step limit", err)
	}
	warmSnap, err := warm.State(ctx, "r-growth")
	if err != nil {
		tb.Fatal(err)
	}
	r := growthGraph(tb, append(opts, graph.WithStepLimit(allocWarmSteps+steps))...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := r.Resume(ctx, "r-growth"); !errors.Is(err, graph.ErrStepLimit) {
		tb.Fatalf("%d phases: %v, want the step limit", n, err)
	}
	runtime.ReadMemStats(&after)
	snap, err := r.State(ctx, "r-growth")
	if err != nil {
		tb.Fatal(err)
	}
	if got := snap.Seq - warmSnap.Seq; got != uint64(steps) {
		tb.Fatalf("%d phases: %d steps, want %d", n, got, steps)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// allocBytesPerStep is what a step of the growth workload of a plan of n
// phases allocates: the difference between a resume of allocSteps steps
// and one of allocFewSteps, per step.
func allocBytesPerStep(tb testing.TB, n int) float64 {
	tb.Helper()
	few, many := resumeAlloc(tb, n, allocFewSteps), resumeAlloc(tb, n, allocSteps)
	return (float64(many) - float64(few)) / (allocSteps - allocFewSteps)
}

// TestStepAllocIsFlat holds what a step allocates to the phase it
// changes, not the plan: a step of a 1,000-phase plan allocates at most
// three times what a step of a 10-phase plan does, plus one copy of the
// list of phase states (unsafe.Sizeof(state.PhaseState{}) bytes a phase:
// the new list state.WithPhaseState makes, whose phases' contents are
// shared, not copied). A step that deep-copied the plan or the progress,
// or encoded every phase and the plan (as before), allocates several
// times that bound; measured: 2.3 MB a step, 45 times the 10-phase
// step, before.
func TestStepAllocIsFlat(t *testing.T) {
	small := allocBytesPerStep(t, 10)
	large := allocBytesPerStep(t, 1000)
	list := 1000 * float64(unsafe.Sizeof(state.PhaseState{}))
	t.Logf("bytes allocated/step: %.0f at 10 phases, %.0f at 1,000 phases (ratio %.2f; a list of 1,000 phase states: %.0f)",
		small, large, large/small, list)
	if large > 3*small+list {
		t.Errorf("a step of a 1,000-phase plan allocates %.0f bytes, over 3× the %.0f of a 10-phase plan plus %.0f", large, small, list)
	}
}

// BenchmarkStepAlloc reports the bytes a step of the growth workload
// allocates (see allocBytesPerStep) for plans of 10, 100 and 1,000
// phases.
func BenchmarkStepAlloc(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("phases=%d", n), func(b *testing.B) {
			b.ReportMetric(allocBytesPerStep(b, n), "B/step")
		})
	}
}
