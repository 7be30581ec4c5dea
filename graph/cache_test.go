package graph_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/graph"
)

// slowState is the state of issue 34's cache defect: a log that nodes
// append to, a counter, and who started the run.
type slowState struct {
	Log   []string `graph:"append"`
	N     int
	Owner string
}

// TestCacheHitKeepsThisRunsState is issue 34's defect: node slow appends
// "slow" to the log and increments N; its cache key is N. Run b hits the
// entry run a left, and must get its own log with "slow" appended ([b
// slow]), its own owner and N+1, not run a's state ([a slow]).
func TestCacheHitKeepsThisRunsState(t *testing.T) {
	var runs atomic.Int32
	whole := func(_ context.Context, s slowState) (slowState, error) {
		runs.Add(1)
		s.Log = append(slices.Clone(s.Log), "slow")
		s.N++
		return s, nil
	}
	partial := func(_ context.Context, s slowState) (slowState, error) {
		runs.Add(1)
		return slowState{Log: []string{"slow"}, N: s.N + 1}, nil
	}
	key := graph.CacheKey(func(s slowState) string { return fmt.Sprint(s.N) }, 0)
	for _, tc := range []struct {
		name string
		node graph.NodeFunc[slowState]
		opts []graph.NodeOption
	}{
		{"whole state", whole, []graph.NodeOption{key}},
		{"partial update", partial, []graph.NodeOption{key, graph.Partial()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs.Store(0)
			g := graph.New[slowState]().
				AddNode("slow", tc.node, tc.opts...).
				AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
			r := mustCompile(t, g)
			ctx := context.Background()
			a, err := r.Run(ctx, "a", slowState{Log: []string{"a"}, Owner: "a"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := r.Run(ctx, "b", slowState{Log: []string{"b"}, Owner: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%v %d %s", a.State.Log, a.State.N, a.State.Owner); got != "[a slow] 1 a" {
				t.Errorf("run a = %s", got)
			}
			if got := fmt.Sprintf("%v %d %s", b.State.Log, b.State.N, b.State.Owner); got != "[b slow] 1 b" {
				t.Errorf("run b (a cache hit) = %s, want [b slow] 1 b", got)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("slow ran %d times, want 1 (the second run is a hit)", n)
			}
		})
	}
	// Without the append reducer the log is a plain field: the node's write
	// is the whole new log, as in LangGraph (a LastValue channel), but the
	// fields the node did not write are still this run's.
	type plain struct {
		Log   []string
		N     int
		Owner string
	}
	g := graph.New[plain]().
		AddNode("slow", func(_ context.Context, s plain) (plain, error) {
			s.Log = append(slices.Clone(s.Log), "slow")
			s.N++
			return s, nil
		}, graph.CacheKey(func(s plain) string { return fmt.Sprint(s.N) }, 0)).
		AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
	r := mustCompile(t, g)
	ctx := context.Background()
	if _, err := r.Run(ctx, "a", plain{Log: []string{"a"}, Owner: "a"}); err != nil {
		t.Fatal(err)
	}
	b, err := r.Run(ctx, "b", plain{Log: []string{"b"}, Owner: "b"})
	if got := fmt.Sprintf("%v %d %s", b.State.Log, b.State.N, b.State.Owner); err != nil || got != "[a slow] 1 b" {
		t.Errorf("untagged: run b = %s, %v; want [a slow] 1 b", got, err)
	}
}

// cacheFuzzState has a field of every reducer kind, and one (Note) that no
// node writes.
type cacheFuzzState struct {
	Log  []string `graph:"append"`
	N    int      `graph:"sum"`
	Tag  string
	Last string `graph:"last"`
	Max  int    // reduced with max (Graph.Reduce)
	Note string
}

func (s cacheFuzzState) field(i int) string {
	return [...]string{strings.Join(s.Log, ","), fmt.Sprint(s.N), s.Tag, s.Last, fmt.Sprint(s.Max), s.Note}[i]
}

func sameFuzzState(a, b cacheFuzzState) bool {
	return slices.Equal(a.Log, b.Log) && a.N == b.N && a.Tag == b.Tag && a.Last == b.Last && a.Max == b.Max && a.Note == b.Note
}

// FuzzCacheHitIsARun checks issue 34's property: for any key function, a
// cache hit gives the same state as running the node. The key covers any
// subset of the state's fields (none: every call hits); the node's write is
// made from its key only (the promise a key makes), appending to Log,
// adding to N, setting Tag, Last and Max, as a whole-state or a Partial
// node. Run a fills the cache; run b differs from a only outside the key,
// so it hits, and its result must be what the node gives b uncached.
func FuzzCacheHitIsARun(f *testing.F) {
	f.Add(uint8(0b000010), uint8(0b11111), false, "a", 0, "t", 3, "n", "b", 5, "u", 1, "m")
	f.Add(uint8(0), uint8(0b00001), true, "a b", 2, "", 0, "", "c", 7, "x", 9, "y")
	f.Add(uint8(0b111111), uint8(0b10100), false, "", -4, "t", 3, "n", "", 0, "", 0, "")
	f.Add(uint8(0b010001), uint8(0b01011), true, "x", 1, "t", -3, "", "y z", 1, "t", 8, "q")
	f.Fuzz(func(t *testing.T, keyMask, writes uint8, partial bool,
		logA string, nA int, tagA string, maxA int, noteA string,
		logB string, nB int, tagB string, maxB int, noteB string) {
		for _, s := range []string{logA, tagA, noteA, logB, tagB, noteB} {
			if !utf8.ValidString(s) {
				t.Skip("the JSON codec does not keep invalid UTF-8, in the cache as in checkpoints")
			}
		}
		a := cacheFuzzState{Log: strings.Fields(logA), N: nA, Tag: tagA, Last: tagA + "!", Max: maxA, Note: noteA}
		b := cacheFuzzState{Log: strings.Fields(logB), N: nB, Tag: tagB, Last: tagB + "?", Max: maxB, Note: noteB}
		// b takes a's value of every field the key covers.
		if keyMask&1 != 0 {
			b.Log = a.Log
		}
		if keyMask&2 != 0 {
			b.N = a.N
		}
		if keyMask&4 != 0 {
			b.Tag = a.Tag
		}
		if keyMask&8 != 0 {
			b.Last = a.Last
		}
		if keyMask&16 != 0 {
			b.Max = a.Max
		}
		if keyMask&32 != 0 {
			b.Note = a.Note
		}
		key := func(s cacheFuzzState) string {
			var parts []string
			for i := range 6 {
				if keyMask&(1<<i) != 0 {
					parts = append(parts, s.field(i))
				}
			}
			return strings.Join(parts, "\x00")
		}
		if key(a) != key(b) {
			t.Fatalf("keys differ: %q %q", key(a), key(b))
		}
		// write is the node's write, made from the key only.
		write := func(s cacheFuzzState) cacheFuzzState {
			h := fnv.New64a()
			h.Write([]byte(key(s)))
			k := h.Sum64()
			var w cacheFuzzState
			if writes&1 != 0 {
				w.Log = []string{fmt.Sprintf("l%d", k%97), fmt.Sprintf("m%d", k%89)}[:1+k%2]
			}
			if writes&2 != 0 {
				w.N = int(k%13) - 6
			}
			if writes&4 != 0 {
				w.Tag = fmt.Sprintf("t%d", k%11)
			}
			if writes&8 != 0 {
				w.Last = fmt.Sprintf("s%d", k%7)
			}
			if writes&16 != 0 {
				w.Max = int(k%23) - 11
			}
			return w
		}
		var ran atomic.Int32
		node := func(_ context.Context, s cacheFuzzState) (cacheFuzzState, error) {
			ran.Add(1)
			w := write(s)
			if partial {
				return w, nil
			}
			out := s
			out.Log = append(slices.Clone(s.Log), w.Log...)
			out.N += w.N
			if writes&4 != 0 {
				out.Tag = w.Tag
			}
			if writes&8 != 0 {
				out.Last = w.Last
			}
			if writes&16 != 0 {
				out.Max = w.Max
			}
			return out, nil
		}
		build := func(cached bool) *graph.Runner[cacheFuzzState] {
			var opts []graph.NodeOption
			if cached {
				opts = append(opts, graph.CacheKey(key, 0))
			}
			if partial {
				opts = append(opts, graph.Partial())
			}
			g := graph.New[cacheFuzzState]().
				AddNode("n", node, opts...).
				AddEdge(graph.START, "n").AddEdge("n", graph.END).
				Reduce(graph.Reducer(func(s *cacheFuzzState) *int { return &s.Max }, func(cur, w int) int { return max(cur, w) }))
			r, err := g.Compile()
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		ctx := context.Background()
		want, err := build(false).Run(ctx, "b", b)
		if err != nil {
			t.Fatal(err)
		}
		if !partial {
			// A node that returns the whole state cannot show a write of
			// the value a field already had: run a's write of such a
			// field is not cached, and b keeps its own value (CachePolicy).
			w := write(a)
			if writes&4 != 0 && a.Tag == w.Tag {
				want.State.Tag = b.Tag
			}
			if writes&8 != 0 && a.Last == w.Last {
				want.State.Last = b.Last
			}
			if writes&16 != 0 && a.Max == w.Max {
				want.State.Max = b.Max
			}
		}
		r := build(true)
		hits := 0
		r.Subscribe(func(e graph.Event) {
			if e.Kind == graph.NodeCached {
				hits++
			}
		})
		if _, err := r.Run(ctx, "a", a); err != nil {
			t.Fatal(err)
		}
		ran.Store(0)
		got, err := r.Run(ctx, "b", b)
		if err != nil {
			t.Fatal(err)
		}
		if hits != 1 || ran.Load() != 0 {
			t.Fatalf("run b: %d hits, node ran %d times; want a hit", hits, ran.Load())
		}
		if !sameFuzzState(got.State, want.State) {
			t.Errorf("a hit gave\n%+v\nrunning the node gives\n%+v\n(a = %+v, b = %+v)", got.State, want.State, a, b)
		}
	})
}
