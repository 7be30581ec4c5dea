package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

type planState struct {
	Log  []int `graph:"append"`
	Sum  int   `graph:"sum"`
	U    uint8 `graph:"sum"`
	F    float64
	Last string `graph:"last"`
	Max  int
}

func testPlan(t *testing.T) *fieldPlan[planState] {
	t.Helper()
	p, problems := newFieldPlan([]FieldReducer[planState]{
		Reducer(func(s *planState) *int { return &s.Max }, func(cur, w int) int { return max(cur, w) }),
	})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return p
}

// naiveApply is fieldPlan.apply written the obvious way: each write, each
// field, one at a time, every append to a fresh slice.
func naiveApply(base planState, ws []write[planState]) planState {
	out := base
	for _, w := range ws {
		for i, op := range w.ops {
			switch i {
			case 0:
				switch op {
				case opSet:
					out.Log = w.val.Log
				case opAppend:
					out.Log = append(slices.Clip(out.Log), w.val.Log...)
				}
			case 1:
				if op == opAdd {
					out.Sum += w.val.Sum
				}
			case 2:
				if op == opAdd {
					out.U += w.val.U
				}
			case 3:
				if op == opSet {
					out.F = w.val.F
				}
			case 4:
				if op == opSet {
					out.Last = w.val.Last
				}
			case 5:
				switch op {
				case opSet:
					out.Max = w.val.Max
				case opReduce:
					out.Max = max(out.Max, w.val.Max)
				}
			}
		}
	}
	return out
}

func randState(rng *rand.Rand) planState {
	s := planState{Sum: rng.IntN(9) - 4, U: uint8(rng.IntN(256)), F: float64(rng.IntN(5)), Last: fmt.Sprint(rng.IntN(3)), Max: rng.IntN(9) - 4}
	if n := rng.IntN(4); n > 0 {
		s.Log = make([]int, n, n+rng.IntN(3)) // spare capacity, which apply must not write into
		for i := range s.Log {
			s.Log[i] = rng.IntN(100)
		}
	}
	return s
}

// TestApplyMatchesNaive checks the reducers' one-allocation apply against
// naiveApply on random writes (partial updates and whole-state diffs), and
// that neither the base nor a write is changed, spare capacity included.
func TestApplyMatchesNaive(t *testing.T) {
	p := testPlan(t)
	rng := rand.New(rand.NewPCG(34, 1))
	for range 3000 {
		base := randState(rng)
		baseCopy := base
		baseCopy.Log = slices.Clone(base.Log)
		spare := slices.Clone(base.Log[:cap(base.Log)])
		var ws []write[planState]
		for range rng.IntN(5) {
			w := write[planState]{ops: make([]fieldOp, len(p.fields))}
			if rng.IntN(2) == 0 {
				w.val = randState(rng)
				p.partialOps(&w.val, w.ops)
			} else {
				out := randState(rng)
				if rng.IntN(2) == 0 { // an append to the base, as a node makes
					out.Log = append(slices.Clone(base.Log), out.Log...)
				}
				p.diff(&base, &out, &w.val, w.ops, true)
			}
			ws = append(ws, w)
		}
		want := naiveApply(base, ws)
		got, err := p.apply(base, ws)
		writersOfF := 0
		for _, w := range ws {
			if w.ops[3] != opNone {
				writersOfF++
			}
		}
		if writersOfF > 1 { // F has no reducer: one writer per step
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("%d writes of F: err %v, want ErrConflict", writersOfF, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(slices.Clip(got.Log), slices.Clip(want.Log)) && !(len(got.Log) == 0 && len(want.Log) == 0) {
			t.Fatalf("Log: apply %v, naive %v (writes %+v)", got.Log, want.Log, ws)
		}
		got.Log, want.Log = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("apply %+v, naive %+v", got, want)
		}
		if !slices.Equal(base.Log, baseCopy.Log) || !slices.Equal(base.Log[:cap(base.Log)], spare) {
			t.Fatalf("apply changed the base's log: %v (spare %v), was %v", base.Log[:cap(base.Log)], spare, baseCopy.Log)
		}
	}
}

// TestDiffPatchRoundTrip: applying a whole-state node's diff to its own
// input gives its output back.
func TestDiffPatchRoundTrip(t *testing.T) {
	p := testPlan(t)
	rng := rand.New(rand.NewPCG(34, 2))
	for range 3000 {
		in, out := randState(rng), randState(rng)
		if rng.IntN(2) == 0 {
			out.Log = append(slices.Clone(in.Log), out.Log...)
		}
		var d planState
		ops := p.diff(&in, &out, &d, make([]fieldOp, len(p.fields)), false)
		got := p.patch(in, d, ops)
		if !slices.Equal(got.Log, out.Log) {
			t.Fatalf("Log: patch %v, out %v", got.Log, out.Log)
		}
		got.Log, out.Log = nil, nil
		if !reflect.DeepEqual(got, out) {
			t.Fatalf("patch %+v, out %+v (ops %v)", got, out, ops)
		}
	}
}
