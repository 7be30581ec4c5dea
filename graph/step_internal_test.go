package graph

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// The decisions in step.go are pure: these tests call them without a store
// or a running node.

func testRunner(t *testing.T, opts ...Option) *Runner[int] {
	t.Helper()
	two := func(context.Context, int) ([]string, error) { return []string{"b", "c"}, nil }
	id := func(_ context.Context, n int) (int, error) { return n, nil }
	r, err := New[int]().AddNode("a", id).AddNode("b", id).AddNode("c", id).
		AddEdge(START, "a").AddConditionalEdge("a", two, "b", "c").
		AddEdge("b", END).AddEdge("c", END).
		Compile(append(opts, WithMerge(func(_ context.Context, base int, _ []int) (int, error) { return base, nil }))...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPlanTasksIsDeterministic(t *testing.T) {
	cp := checkpoint.Checkpoint{RunID: "r", Seq: 7, Step: 3, Next: []string{"b", "c"}}
	answers := [][]byte{[]byte(`true`)}
	a := planTasks(cp, "r/4/c/1", answers)
	b := planTasks(cp, "r/4/c/1", answers)
	if len(a) != 2 || a[0].id != "r/4/b/0" || a[1].id != "r/4/c/1" || a[0].id != b[0].id || a[1].id != b[1].id {
		t.Fatalf("tasks = %+v, %+v", a[0], a[1])
	}
	if a[0].answers != nil || len(a[1].answers) != 1 {
		t.Fatalf("answers went to the wrong task: %v / %v", a[0].answers, a[1].answers)
	}
}

func TestNewCheckpointAndStaticInterrupts(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := testRunner(t, WithClock(func() time.Time { return now }), WithInterruptBefore("c"), WithSchemaVersion(3))
	prev := checkpoint.Checkpoint{RunID: "r", Seq: 4, Step: 2}
	cp, err := r.newCheckpoint(prev, 3, []string{"a"}, []string{"b", "c"}, nil, 5, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != 5 || cp.Parent != 4 || cp.Step != 3 || !cp.Time.Equal(now) || cp.Meta[MetaSchema] != "3" || cp.Meta[MetaSource] != "loop" {
		t.Fatalf("checkpoint = %+v", cp)
	}
	if cp.Status != StatusInterrupted || cp.Interrupt == nil || cp.Interrupt.Kind != KindBefore || cp.Interrupt.Node != "c" || cp.Interrupt.TaskID != "r/4/c/1" {
		t.Fatalf("interrupt = %+v (status %s)", cp.Interrupt, cp.Status)
	}
	if cp.Values != nil {
		t.Fatalf("values encoded without a store: %q", cp.Values)
	}
	done, _ := r.newCheckpoint(prev, 3, []string{"b"}, nil, nil, 5, "loop")
	if done.Status != StatusDone || done.Interrupt != nil {
		t.Fatalf("final checkpoint = %+v", done)
	}
}

func TestRouteDedupesAndDropsEnd(t *testing.T) {
	r := testRunner(t)
	next, _, err := r.route(context.Background(), []string{"b", "c", "a"}, 0, nil)
	if err != nil || !slices.Equal(next, []string{"b", "c"}) {
		t.Fatalf("route = %v, %v", next, err)
	}
}

func TestInterruptCheckpointKeepsTheStep(t *testing.T) {
	r := testRunner(t)
	base := checkpoint.Checkpoint{RunID: "r", Seq: 9, Step: 4, Next: []string{"b", "c"}, Values: map[string][]byte{"$": []byte("1")},
		Meta: map[string]string{MetaWritesSeq: "8"}}
	tk := &task{id: "r/5/c/1", node: "c", answers: [][]byte{[]byte(`1`)}}
	cp := r.interruptCheckpoint(base, tk, &InterruptError{Index: 1, Payload: []byte(`"q"`)})
	if cp.Seq != 10 || cp.Parent != 9 || cp.Step != 4 || !slices.Equal(cp.Next, base.Next) || writesSeq(cp) != 8 {
		t.Fatalf("checkpoint = %+v", cp)
	}
	if in := cp.Interrupt; in.TaskID != tk.id || in.Index != 1 || len(in.Answers) != 1 || string(in.Payload) != `"q"` {
		t.Fatalf("interrupt = %+v", in)
	}
}

func FuzzPackValues(f *testing.F) {
	f.Add([]byte("k"), []byte("v"), []byte("\x01\x02"))
	f.Fuzz(func(t *testing.T, k, v, junk []byte) {
		in := map[string][]byte{string(k): v, "other": junk}
		out, err := unpackValues(packValues(in))
		if err != nil || !maps.EqualFunc(in, out, bytes.Equal) {
			t.Fatalf("round trip: %q -> %q, %v", in, out, err)
		}
		_, _ = unpackValues(junk) // must not panic
	})
}

func FuzzJSONCodecDecode(f *testing.F) {
	type state struct {
		A int
		B []string
		C struct{ D string }
	}
	f.Add([]byte(`1`), []byte(`["x"]`), []byte(`{"D":"y"}`))
	f.Add([]byte(`1`), []byte(`null`), []byte(`{"E":1}`))
	c := NewJSONCodec[state]()
	f.Fuzz(func(t *testing.T, a, b, cc []byte) {
		s, err := c.Decode(map[string][]byte{"A": a, "B": b, "C": cc})
		if err != nil {
			return
		}
		vals, err := c.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.Decode(vals)
		if err != nil || !slices.Equal(again.B, s.B) || again.A != s.A || again.C != s.C {
			t.Fatalf("re-decode = %+v, %v; want %+v", again, err, s)
		}
	})
}
