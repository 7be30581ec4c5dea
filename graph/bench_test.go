package graph_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/graph"
)

// loopState is the "loop" workload: one node increments Counter and leaves
// the 2,048-byte Payload alone, and a conditional edge loops back until
// Counter reaches the goal.
type loopState struct {
	Counter int
	Payload string
}

func loopRunner(b *testing.B, goal int, opts ...graph.Option) *graph.Runner[loopState] {
	b.Helper()
	inc := func(_ context.Context, s loopState) (loopState, error) {
		s.Counter++
		return s, nil
	}
	more := func(_ context.Context, s loopState) ([]string, error) {
		if s.Counter < goal {
			return []string{"inc"}, nil
		}
		return []string{graph.END}, nil
	}
	g := graph.New[loopState]().
		AddNode("inc", inc).
		AddEdge(graph.START, "inc").
		AddConditionalEdge("inc", more, "inc", graph.END)
	r, err := g.Compile(append(opts, graph.WithStepLimit(goal+1))...)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func loopInitial() loopState { return loopState{Payload: strings.Repeat("x", 2048)} }

// BenchmarkLoop runs b.N steps of the loop workload in one run and reports
// ns/step; the Badger cases also report bytes/step on disk after a separate
// 10,000-step run.
func BenchmarkLoop(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, opts ...graph.Option) {
		r := loopRunner(b, b.N, opts...)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		res, err := r.Run(ctx, "bench", loopInitial())
		elapsed := time.Since(start)
		b.StopTimer()
		if err != nil || res.State.Counter != b.N {
			b.Fatalf("Run = %+v, %v", res.State.Counter, err)
		}
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/step")
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "steps/s")
	}
	b.Run("store=none", func(b *testing.B) { run(b) })
	b.Run("store=memory", func(b *testing.B) {
		run(b, graph.WithStore(checkpoint.NewMemory()), graph.WithDurability(graph.Async))
	})
	for _, d := range []graph.Durability{graph.Async, graph.Sync} {
		b.Run("store=badger-"+d.String(), func(b *testing.B) {
			perStep := bytesPerStep(b, 10000)
			store, err := badger.Open(b.TempDir(), badger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			run(b, graph.WithStore(store), graph.WithDurability(d))
			b.ReportMetric(perStep, "bytes/step")
		})
	}
	for _, d := range []graph.Durability{graph.Async, graph.Sync} {
		b.Run("store=postgres-"+d.String(), func(b *testing.B) {
			store := openPostgres(b)
			run(b, graph.WithStore(store), graph.WithDurability(d))
			b.ReportMetric(postgresBytesPerStep(b, 10000), "bytes/step")
		})
	}
}

// openPostgres opens a PostgreSQL store on a fresh database (pgtest).
func openPostgres(b *testing.B) *postgres.Store {
	b.Helper()
	store, err := postgres.Open(context.Background(), pgtest.URL(b), postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return store
}

// postgresBytesPerStep runs steps steps on a fresh PostgreSQL store and
// returns the size of its tables with their indexes and TOAST afterwards,
// per step.
func postgresBytesPerStep(b *testing.B, steps int) float64 {
	b.Helper()
	store := openPostgres(b)
	r := loopRunner(b, steps, graph.WithStore(store), graph.WithDurability(graph.Async))
	if _, err := r.Run(context.Background(), "size", loopInitial()); err != nil {
		b.Fatal(err)
	}
	var size int64
	err := store.Pool().QueryRow(context.Background(), `SELECT sum(pg_total_relation_size(c.oid))::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'gaffer' AND c.relkind = 'r'`).Scan(&size)
	if err != nil {
		b.Fatal(err)
	}
	return float64(size) / float64(steps)
}

// BenchmarkRawInsert is the floor for the PostgreSQL store's Sync
// durability: one single-row INSERT of a 100-byte record (the size of a
// loop step's) with synchronous_commit on, on the server
// BenchmarkLoop/store=postgres-sync uses.
func BenchmarkRawInsert(b *testing.B) {
	ctx := context.Background()
	store := openPostgres(b)
	pool := store.Pool()
	if _, err := pool.Exec(ctx, `CREATE TABLE raw (id bigint PRIMARY KEY, record bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	rec := []byte(strings.Repeat("x", 100))
	id := 0
	b.ResetTimer()
	for b.Loop() {
		id++
		if _, err := pool.Exec(ctx, `INSERT INTO raw (id, record) VALUES ($1, $2)`, id, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoopParallel runs the loop workload in 64 runs at once on one
// Runner and one Badger store with Sync durability, b.N steps in all, and
// reports ns/step and steps/s over all runs: compare steps/s with
// BenchmarkLoop/store=badger-sync in the same invocation to see how far
// concurrent runs share the store's flushes (group commit).
func BenchmarkLoopParallel(b *testing.B) {
	b.Run("runs=64/store=badger-sync", func(b *testing.B) {
		store, err := badger.Open(b.TempDir(), badger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		loopParallel(b, 64, store)
	})
	b.Run("runs=16/store=postgres-sync", func(b *testing.B) { loopParallel(b, 16, openPostgres(b)) })
}

// loopParallel runs the loop workload in runs runs at once on one Runner
// and store with Sync durability, b.N steps in all.
func loopParallel(b *testing.B, runs int, store checkpoint.Store) {
	ctx := context.Background()
	perRun := max(1, b.N/runs)
	r := loopRunner(b, perRun, graph.WithStore(store), graph.WithDurability(graph.Sync))
	errs := make([]error, runs)
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range runs {
		wg.Go(func() {
			res, err := r.Run(ctx, fmt.Sprintf("bench%d", i), loopInitial())
			if err == nil && res.State.Counter != perRun {
				err = fmt.Errorf("counter %d, want %d", res.State.Counter, perRun)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	steps := float64(perRun * runs)
	b.ReportMetric(float64(elapsed.Nanoseconds())/steps, "ns/step")
	b.ReportMetric(steps/elapsed.Seconds(), "steps/s")
}

// bytesPerStep runs steps steps on a fresh Badger store and returns the size
// of the store's files after Close, per step.
func bytesPerStep(b *testing.B, steps int) float64 {
	b.Helper()
	dir := b.TempDir()
	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := loopRunner(b, steps, graph.WithStore(store), graph.WithDurability(graph.Async))
	if _, err := r.Run(context.Background(), "size", loopInitial()); err != nil {
		b.Fatal(err)
	}
	if err := store.Close(); err != nil {
		b.Fatal(err)
	}
	var size int64
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			size += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return float64(size) / float64(steps)
}

// BenchmarkRawAppendFsync is the floor for Sync durability: append 2 KiB to a
// file and fsync it, once per op.
func BenchmarkRawAppendFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := []byte(strings.Repeat("x", 2048))
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}
