package nodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// busyState is growthState(n) with every phase state filled in, each
// different.
func busyState(t *testing.T, n int) state.ExecutionState {
	s := growthState(t, n)
	for i := range s.Progress.Phases {
		ps := &s.Progress.Phases[i]
		ps.Status, ps.Attempt, ps.PreCommit, ps.Error = state.PhaseRetrying, 2, fmt.Sprintf("%040d", i), fmt.Sprintf("error %d", i)
		ps.Untracked = []string{fmt.Sprintf("notes-%d.txt", i)}
		ps.Review = &state.ReviewResult{Comments: fmt.Sprintf("review %d", i)}
	}
	return s
}

func TestCodecRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, PhaseChunk - 1, PhaseChunk, PhaseChunk + 1, 600} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := growthState(t, max(n, 1))
			if n == 0 {
				s.Plan, s.Progress.Phases = state.Plan{}, nil
			} else {
				s = busyState(t, n)
			}
			c := NewCodec()
			vals, err := c.Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			if want := (n+PhaseChunk-1)/PhaseChunk + 11; len(vals) != want {
				t.Errorf("%d values, want %d", len(vals), want)
			}
			got, err := c.Decode(vals)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, s) {
				t.Fatalf("round trip changed the state:\n got %+v\nwant %+v", got.Progress, s.Progress)
			}
		})
	}
}

// TestCodecRewritesOnlyTheChangedChunk: a change of one phase changes the
// chunk holding that phase, nothing else (the run has no cursor in its
// "progress" value: the phases' lanes are where it is).
func TestCodecRewritesOnlyTheChangedChunk(t *testing.T) {
	c := NewCodec()
	s := busyState(t, 600)
	before, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := s.PhaseState(300)
	ps.Status = state.PhaseCompleted
	s2, err := s.WithPhaseState(ps)
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.Encode(s2)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for k, v := range after {
		if !bytes.Equal(before[k], v) {
			changed = append(changed, k)
		}
	}
	want := []string{chunkKey(300 / PhaseChunk)}
	if len(changed) != 1 || changed[0] != want[0] {
		t.Fatalf("changed values %v, want %v", changed, want)
	}
}

func TestCodecIsStrict(t *testing.T) {
	c := NewCodec()
	vals, err := c.Encode(busyState(t, 2*PhaseChunk+1))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string][]byte)) map[string][]byte {
		m := make(map[string][]byte, len(vals))
		for k, v := range vals {
			m[k] = v
		}
		f(m)
		return m
	}
	for _, tc := range []struct {
		name string
		vals map[string][]byte
		is   error
	}{
		{"missing chunk", edit(func(m map[string][]byte) { delete(m, chunkKey(1)) }), graph.ErrMissingField},
		{"extra chunk", edit(func(m map[string][]byte) { m[chunkKey(3)] = []byte("[]") }), graph.ErrUnknownField},
		{"short chunk", edit(func(m map[string][]byte) { m[chunkKey(2)] = []byte("[]") }), graph.ErrCodec},
		{"bad count", edit(func(m map[string][]byte) { m[phasesKey] = []byte(`{"count":-1,"chunk":32}`) }), graph.ErrCodec},
		{"unknown index field", edit(func(m map[string][]byte) { m[phasesKey] = []byte(`{"count":65,"chunk":32,"x":1}`) }), graph.ErrCodec},
		{"phases twice", edit(func(m map[string][]byte) {
			m["progress"] = []byte(`{"current_phase":0,"phases":[{"index":0}],"review_iteration":0,"plan_revision":0}`)
		}), graph.ErrCodec},
		{"unknown field", edit(func(m map[string][]byte) { m["nope"] = []byte("1") }), graph.ErrUnknownField},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Decode(tc.vals); !errors.Is(err, tc.is) || !errors.Is(err, graph.ErrCodec) {
				t.Fatalf("Decode = %v, want %v", err, tc.is)
			}
		})
	}
}

// TestCodecReadsOldCheckpoints writes half a run with graph.JSONCodec (the
// whole phase list in the "progress" value, as gaffer did before) to a
// Badger store, then resumes it with the workflow's codec: the old
// checkpoints decode to the same states and the run finishes as one run
// written with the old codec alone.
func TestCodecReadsOldCheckpoints(t *testing.T) {
	ctx := context.Background()
	const n = 40
	clock := graph.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) })
	run := func(dir string, codec graph.Codec[state.ExecutionState], limit int, resume bool) (*badger.Store, *graph.Runner[state.ExecutionState]) {
		store, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := growthGraph(t, graph.WithStore(store), graph.WithCodec(codec), graph.WithStepLimit(limit), clock)
		if resume {
			_, err = r.Resume(ctx, "r-growth")
		} else {
			_, err = r.Run(ctx, "r-growth", growthState(t, n))
		}
		if err != nil && !errors.Is(err, graph.ErrStepLimit) {
			t.Fatal(err)
		}
		return store, r
	}
	old := graph.NewJSONCodec[state.ExecutionState]()
	dir := t.TempDir()
	store, oldR := run(dir, old, 50, false)
	oldHist, err := oldR.History(ctx, "r-growth", 0)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()

	store, r := run(dir, NewCodec(), 4*n, true)
	defer store.Close()
	got, err := r.State(ctx, "r-growth")
	if err != nil || got.Status != graph.StatusDone {
		t.Fatalf("resumed run: %+v, %v", got.Status, err)
	}
	newHist, err := r.History(ctx, "r-growth", 0)
	if err != nil {
		t.Fatal(err)
	}
	bySeq := make(map[uint64]state.ExecutionState, len(newHist))
	for _, h := range newHist {
		bySeq[h.Seq] = h.State
	}
	for _, h := range oldHist {
		if !reflect.DeepEqual(bySeq[h.Seq], h.State) {
			t.Fatalf("checkpoint %d reads differently with the new codec", h.Seq)
		}
	}
	cp, err := store.Latest(ctx, "r-growth")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cp.Values[phasesKey]; !ok {
		t.Fatalf("the resumed run's checkpoints are not chunked: %d values", len(cp.Values))
	}

	store2, r2 := run(t.TempDir(), old, 4*n, false)
	defer store2.Close()
	want, err := r2.State(ctx, "r-growth")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.State, want.State) || got.Seq != want.Seq {
		t.Fatalf("resumed run ended at seq %d, a run with the old codec at %d, or their states differ", got.Seq, want.Seq)
	}
}

// TestCodecReadsCheckpointsWithoutOutbox: a checkpoint written before runs
// had an outbox (no "outbox" value, chunked or not) decodes, with an empty
// outbox; one written now round-trips its notices.
func TestCodecReadsCheckpointsWithoutOutbox(t *testing.T) {
	s := busyState(t, 3)
	for _, c := range []graph.Codec[state.ExecutionState]{NewCodec(), graph.NewJSONCodec[state.ExecutionState]()} {
		vals, err := c.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		delete(vals, outboxKey)
		got, err := NewCodec().Decode(vals)
		if err != nil {
			t.Fatalf("%T: old checkpoint: %v", c, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("%T: old checkpoint read as %+v", c, got.Outbox)
		}
	}
	s.Config.Notify = &state.NotifyConfig{Targets: []state.NotifyTarget{{Kind: "ntfy", URL: "https://ntfy.sh/t"}}}
	s = s.WithNotice(state.NoticeCompleted, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "done", "")
	vals, err := NewCodec().Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewCodec().Decode(vals)
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: %+v, %v", got.Outbox, err)
	}
}
