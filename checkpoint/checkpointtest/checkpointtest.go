package checkpointtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Run runs the whole suite against stores made by open.
func Run(t *testing.T, open func(t *testing.T) checkpoint.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s checkpoint.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"NoAliasing", testNoAliasing},
		{"RunIsolation", testRunIsolation},
		{"Namespaces", testNamespaces},
		{"NotFound", testNotFound},
		{"List", testList},
		{"PutConflicts", testPutConflicts},
		{"Writes", testWrites},
		{"Prune", testPrune},
		{"Delete", testDelete},
		{"Runs", testRuns},
		{"RunSummaries", testRunSummaries},
		{"Lease", testLease},
		{"LeaseExpiry", testLeaseExpiry},
		{"LeaseDeadHolder", testLeaseDeadHolder},
		{"Fencing", testFencing},
		{"PausedHolder", testPausedHolder},
		{"RetriedPut", testRetriedPut},
		{"ConcurrentPut", testConcurrentPut},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"ConcurrentFirstAcquire", testConcurrentFirstAcquire},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

// big is a value over any sensible blob threshold.
var big = bytes.Repeat([]byte("0123456789abcdef"), 300)

// cp makes the n-th checkpoint of a run with a changing counter and an
// unchanged large payload.
func cp(run string, seq uint64) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{
		RunID: run, Seq: seq, Parent: seq - 1, Step: int(seq),
		Ran: []string{"step"}, Next: []string{"step"},
		Values: map[string][]byte{"counter": fmt.Appendf(nil, "%d", seq), "payload": big},
		Status: "running",
		Time:   time.Unix(1_700_000_000+int64(seq), 123),
	}
}

func put(t *testing.T, s checkpoint.Store, cps ...checkpoint.Checkpoint) {
	t.Helper()
	for _, c := range cps {
		if err := s.Put(ctx, c, checkpoint.PutOptions{}); err != nil {
			t.Fatalf("Put(%s, %d): %v", c.RunID, c.Seq, err)
		}
	}
}

func putN(t *testing.T, s checkpoint.Store, run string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		put(t, s, cp(run, uint64(i)))
	}
}

// same reports whether two checkpoints are equal, nil and empty distinct,
// times compared as instants.
func same(a, b checkpoint.Checkpoint) bool {
	if !a.Time.Equal(b.Time) {
		return false
	}
	a.Time, b.Time = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func wantSame(t *testing.T, got, want checkpoint.Checkpoint) {
	t.Helper()
	if !same(got, want) {
		t.Fatalf("checkpoint differs\n got: %#v\nwant: %#v", got, want)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

func seqs(cps []checkpoint.Checkpoint) []uint64 {
	out := []uint64{}
	for _, c := range cps {
		out = append(out, c.Seq)
	}
	return out
}

func testRoundTrip(t *testing.T, s checkpoint.Store) {
	full := checkpoint.Checkpoint{
		RunID: "run-1", Seq: 1, Parent: 0, Step: 7,
		Ran:  []string{"a", "b"},
		Next: []string{}, // empty, not nil
		Values: map[string][]byte{
			"nil": nil, "empty": {}, "small": []byte(`{"n":1}`), "big": big,
			"big-again": big, // two fields sharing one blob
		},
		Interrupt: &checkpoint.Interrupt{
			Node: "review", TaskID: "t-1", Kind: "dynamic", Index: 2,
			Payload: []byte(`{"q":"ok?"}`), Answers: [][]byte{[]byte(`true`), nil, {}},
		},
		Status: "interrupted",
		Meta:   map[string]string{"source": "loop", "": "empty key"},
		Time:   time.Date(2026, 11, 23, 3, 35, 0, 123456789, time.UTC),
	}
	bare := checkpoint.Checkpoint{RunID: "run-1", Seq: 2, Parent: 1, Values: map[string][]byte{}, Meta: map[string]string{}}
	put(t, s, full, bare)
	for _, want := range []checkpoint.Checkpoint{full, bare} {
		got, err := s.Get(ctx, want.RunID, want.Seq)
		if err != nil {
			t.Fatal(err)
		}
		wantSame(t, got, want)
	}
	latest, err := s.Latest(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, latest, bare)
	list, err := s.List(ctx, "run-1", checkpoint.ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %d checkpoints, %v", len(list), err)
	}
	wantSame(t, list[0], bare)
	wantSame(t, list[1], full)

	// A checkpoint with nothing set but its place in the run.
	zero := checkpoint.Checkpoint{RunID: "run-1", Seq: 3, Parent: 2}
	put(t, s, zero)
	got, err := s.Get(ctx, "run-1", 3)
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, got, zero)
}

func testNoAliasing(t *testing.T, s checkpoint.Store) {
	in := cp("r", 1)
	in.Values["payload"] = bytes.Clone(big)
	in.Interrupt = &checkpoint.Interrupt{Payload: []byte("p")}
	in.Meta = map[string]string{"k": "v"}
	want := cp("r", 1)
	want.Interrupt = &checkpoint.Interrupt{Payload: []byte("p")}
	want.Meta = map[string]string{"k": "v"}
	put(t, s, in)
	in.Values["payload"][0] = 'X'
	in.Values["counter"] = []byte("changed")
	in.Ran[0] = "changed"
	in.Interrupt.Payload[0] = 'X'
	in.Meta["k"] = "changed"

	got, err := s.Get(ctx, "r", 1)
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, got, want)
	got.Values["payload"][0] = 'Y'
	got.Next[0] = "changed"
	got.Meta["k"] = "changed"
	again, err := s.Latest(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, again, want)

	w := []checkpoint.Write{{TaskID: "t", Value: []byte("v")}}
	if err := s.PutWrites(ctx, "r", 1, w, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	w[0].Value[0] = 'X'
	ws, err := s.Writes(ctx, "r", 1)
	if err != nil || len(ws) != 1 || string(ws[0].Value) != "v" {
		t.Fatalf("Writes = %v, %v; want the value as written", ws, err)
	}
}

func testRunIsolation(t *testing.T, s checkpoint.Store) {
	// Run ids that are prefixes of each other must not mix.
	runs := []string{"a", "ab", "a/b", "a\x00"}
	for i, r := range runs {
		putN(t, s, r, i+1)
		if err := s.PutWrites(ctx, r, 1, []checkpoint.Write{{TaskID: r}}, checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range runs {
		list, err := s.List(ctx, r, checkpoint.ListOptions{})
		if err != nil || len(list) != i+1 {
			t.Fatalf("List(%q) = %d checkpoints, %v; want %d", r, len(list), err, i+1)
		}
		for _, c := range list {
			if c.RunID != r {
				t.Fatalf("List(%q) returned a checkpoint of run %q", r, c.RunID)
			}
		}
		ws, err := s.Writes(ctx, r, 1)
		if err != nil || len(ws) != 1 || ws[0].TaskID != r {
			t.Fatalf("Writes(%q) = %v, %v", r, ws, err)
		}
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs[1:] {
		if _, err := s.Latest(ctx, r); err != nil {
			t.Fatalf("Latest(%q) after deleting run a: %v", r, err)
		}
	}
}

// testNamespaces checks runs nested in a run (a graph's subgraphs, named
// with checkpoint.ChildRunID): each keeps its own checkpoints, pending
// writes, lease and fencing token beside its parent's, in the same store.
func testNamespaces(t *testing.T, s checkpoint.Store) {
	parent := "p"
	child := checkpoint.ChildRunID(parent, "review:2:0")
	grandchild := checkpoint.ChildRunID(child, "ask:1:0")
	other := "p2" // shares a prefix with the parent, but is not nested in it
	for i, r := range []string{parent, child, grandchild, other} {
		putN(t, s, r, i+2)
		if err := s.PutWrites(ctx, r, 1, []checkpoint.Write{{TaskID: "task:" + r}}, checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []string{parent, child, grandchild, other} {
		latest, err := s.Latest(ctx, r)
		if err != nil || latest.RunID != r || latest.Seq != uint64(i+2) {
			t.Fatalf("Latest(%q) = %d of %q, %v; want seq %d", r, latest.Seq, latest.RunID, err, i+2)
		}
		ws, err := s.Writes(ctx, r, 1)
		if err != nil || len(ws) != 1 || ws[0].TaskID != "task:"+r {
			t.Fatalf("Writes(%q) = %v, %v", r, ws, err)
		}
	}

	// Leases: the same owner holds a run and its child at once; another
	// owner is refused the held child; tokens are the runs' own.
	o1 := checkpoint.Owner{ID: "o1", PID: os.Getpid(), Host: "h"}
	pl, err := s.Acquire(ctx, parent, o1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := s.Acquire(ctx, child, o1, time.Hour)
	if err != nil {
		t.Fatalf("Acquire(child) by the parent's owner: %v", err)
	}
	var held *checkpoint.LeaseHeldError
	if _, err := s.Acquire(ctx, child, checkpoint.Owner{ID: "o2", PID: os.Getpid(), Host: "h"}, time.Hour); !errors.As(err, &held) {
		t.Fatalf("Acquire(child) by another owner = %v, want *LeaseHeldError", err)
	}
	if pl.Token == cl.Token {
		t.Fatalf("parent and child leases share token %d", pl.Token)
	}
	next := cp(child, 4)
	err = s.Put(ctx, next, checkpoint.PutOptions{Fence: pl.Token})
	wantErr(t, err, checkpoint.ErrFenced) // the parent's token does not write the child
	if err := s.Put(ctx, next, checkpoint.PutOptions{Fence: cl.Token, Sync: true}); err != nil {
		t.Fatalf("Put(child) with its own token: %v", err)
	}

	kids, err := checkpoint.ChildRuns(ctx, s, parent)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.RunID)
	}
	slices.Sort(ids)
	if want := []string{child, grandchild}; !slices.Equal(ids, want) {
		t.Fatalf("ChildRuns(%q) = %v, want %v", parent, ids, want)
	}
	// Pruning the child leaves its parent alone.
	if err := s.Prune(ctx, child, 1); err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx, parent, checkpoint.ListOptions{}); err != nil || len(list) != 2 {
		t.Fatalf("List(parent) after pruning the child = %d, %v", len(list), err)
	}
	if err := s.Release(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, pl); err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.DeleteTree(ctx, s, parent); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{parent, child, grandchild} {
		_, err := s.Latest(ctx, r)
		wantErr(t, err, checkpoint.ErrNotFound)
	}
	if _, err := s.Latest(ctx, other); err != nil {
		t.Fatalf("Latest(%q) after DeleteTree(%q): %v", other, parent, err)
	}
}

func testNotFound(t *testing.T, s checkpoint.Store) {
	_, err := s.Latest(ctx, "nope")
	wantErr(t, err, checkpoint.ErrNotFound)
	putN(t, s, "r", 2)
	_, err = s.Get(ctx, "r", 3)
	wantErr(t, err, checkpoint.ErrNotFound)
	_, err = s.Get(ctx, "r", 0)
	wantErr(t, err, checkpoint.ErrNotFound)
	_, err = s.Get(ctx, "other", 1)
	wantErr(t, err, checkpoint.ErrNotFound)
	list, err := s.List(ctx, "nope", checkpoint.ListOptions{})
	if err != nil || len(list) != 0 {
		t.Fatalf("List of a missing run = %v, %v; want empty", list, err)
	}
	ws, err := s.Writes(ctx, "nope", 1)
	if err != nil || len(ws) != 0 {
		t.Fatalf("Writes of a missing run = %v, %v; want empty", ws, err)
	}
	err = s.PutWrites(ctx, "r", 9, []checkpoint.Write{{TaskID: "t"}}, checkpoint.PutOptions{})
	wantErr(t, err, checkpoint.ErrNotFound)
}

func testList(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 10)
	for _, tc := range []struct {
		opts checkpoint.ListOptions
		want []uint64
	}{
		{checkpoint.ListOptions{}, []uint64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{checkpoint.ListOptions{Limit: 3}, []uint64{10, 9, 8}},
		{checkpoint.ListOptions{Before: 4}, []uint64{3, 2, 1}},
		{checkpoint.ListOptions{Before: 8, Limit: 2}, []uint64{7, 6}},
		{checkpoint.ListOptions{Before: 1}, []uint64{}},
		{checkpoint.ListOptions{Before: 100, Limit: 1}, []uint64{10}},
	} {
		got, err := s.List(ctx, "r", tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seqs(got), tc.want) {
			t.Errorf("List(%+v) = %v, want %v", tc.opts, seqs(got), tc.want)
		}
		for _, c := range got {
			wantSame(t, c, cp("r", c.Seq))
		}
	}
}

func testPutConflicts(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 3)
	for _, c := range []checkpoint.Checkpoint{
		cp("r", 3),                        // seq taken
		cp("r", 1),                        // seq taken, parent stale
		{RunID: "r", Seq: 4, Parent: 2},   // parent is not the latest
		{RunID: "r", Seq: 6, Parent: 5},   // parent from the future
		{RunID: "new", Seq: 2, Parent: 1}, // run has no checkpoint 1
	} {
		err := s.Put(ctx, c, checkpoint.PutOptions{})
		wantErr(t, err, checkpoint.ErrConflict)
	}
	err := s.Put(ctx, checkpoint.Checkpoint{RunID: "r", Seq: 9, Parent: 3}, checkpoint.PutOptions{})
	if err == nil {
		t.Fatal("Put of seq 9 after parent 3 succeeded; seqs must grow by one")
	}
	got, err := s.Latest(ctx, "r")
	if err != nil || got.Seq != 3 {
		t.Fatalf("Latest after failed Puts = %d, %v; want 3", got.Seq, err)
	}
	wantSame(t, got, cp("r", 3))
	put(t, s, cp("r", 4))
}

func testWrites(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 2)
	first := []checkpoint.Write{
		{TaskID: "b", Index: 0, Node: "n", Value: []byte("b0")},
		{TaskID: "a", Index: 10, Node: "n", Value: big},
		{TaskID: "a", Index: 2, Node: "n", Value: nil},
		{TaskID: "ab", Index: 0, Node: "m", Value: []byte{}},
	}
	if err := s.PutWrites(ctx, "r", 2, first, checkpoint.PutOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	// Same (task, index) again with other values: the first write stays.
	again := []checkpoint.Write{
		{TaskID: "b", Index: 0, Node: "x", Value: []byte("changed")},
		{TaskID: "a", Index: 1, Node: "n", Value: []byte("a1")},
	}
	if err := s.PutWrites(ctx, "r", 2, again, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, "r", 1, []checkpoint.Write{{TaskID: "old"}}, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Writes(ctx, "r", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []checkpoint.Write{
		{TaskID: "a", Index: 1, Node: "n", Value: []byte("a1")},
		{TaskID: "a", Index: 2, Node: "n", Value: nil},
		{TaskID: "a", Index: 10, Node: "n", Value: big},
		{TaskID: "ab", Index: 0, Node: "m", Value: []byte{}},
		{TaskID: "b", Index: 0, Node: "n", Value: []byte("b0")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Writes =\n%+v\nwant\n%+v", got, want)
	}
	none, err := s.Writes(ctx, "r", 3)
	if err != nil || len(none) != 0 {
		t.Fatalf("Writes of seq 3 = %v, %v; want none", none, err)
	}
}

func testPrune(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 5)
	putN(t, s, "other", 2)
	for seq := uint64(1); seq <= 5; seq++ {
		w := []checkpoint.Write{{TaskID: "t", Value: fmt.Appendf(nil, "w%d", seq)}}
		if err := s.PutWrites(ctx, "r", seq, w, checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, s.Prune(ctx, "r", 0), checkpoint.ErrInvalid)
	if err := s.Prune(ctx, "r", 2); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, "r", checkpoint.ListOptions{})
	if err != nil || !reflect.DeepEqual(seqs(list), []uint64{5, 4}) {
		t.Fatalf("List after Prune(2) = %v, %v; want [5 4]", seqs(list), err)
	}
	for _, c := range list { // the shared payload survived
		wantSame(t, c, cp("r", c.Seq))
	}
	for seq := uint64(1); seq <= 3; seq++ {
		_, err := s.Get(ctx, "r", seq)
		wantErr(t, err, checkpoint.ErrNotFound)
		ws, err := s.Writes(ctx, "r", seq)
		if err != nil || len(ws) != 0 {
			t.Fatalf("Writes of pruned seq %d = %v, %v; want none", seq, ws, err)
		}
	}
	ws, err := s.Writes(ctx, "r", 4)
	if err != nil || len(ws) != 1 || string(ws[0].Value) != "w4" {
		t.Fatalf("Writes of kept seq 4 = %v, %v", ws, err)
	}
	// Pruning changes nothing about ordering: the next Put follows 5.
	wantErr(t, s.Put(ctx, cp("r", 1), checkpoint.PutOptions{}), checkpoint.ErrConflict)
	put(t, s, cp("r", 6))
	if err := s.Prune(ctx, "r", 10); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(ctx, "r", checkpoint.ListOptions{}); len(list) != 3 {
		t.Fatalf("Prune(10) of 3 checkpoints left %d", len(list))
	}
	if err := s.Prune(ctx, "r", 1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Latest(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, got, cp("r", 6))
	if err := s.Prune(ctx, "missing", 1); err != nil {
		t.Fatalf("Prune of a missing run: %v", err)
	}
	other, err := s.Latest(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, other, cp("other", 2))
}

func testDelete(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 3)
	putN(t, s, "keep", 2) // shares the large payload with r
	if err := s.PutWrites(ctx, "r", 3, []checkpoint.Write{{TaskID: "t"}}, checkpoint.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	owner := checkpoint.Owner{ID: "o1", PID: os.Getpid(), Host: "h"}
	if _, err := s.Acquire(ctx, "r", owner, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Latest(ctx, "r")
	wantErr(t, err, checkpoint.ErrNotFound)
	_, err = s.Get(ctx, "r", 1)
	wantErr(t, err, checkpoint.ErrNotFound)
	if ws, err := s.Writes(ctx, "r", 3); err != nil || len(ws) != 0 {
		t.Fatalf("Writes after Delete = %v, %v", ws, err)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].RunID != "keep" {
		t.Fatalf("Runs after Delete = %+v, %v; want only keep", runs, err)
	}
	got, err := s.Latest(ctx, "keep")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, got, cp("keep", 2))
	// The lease went with the run: another owner may take it.
	if _, err := s.Acquire(ctx, "r", checkpoint.Owner{ID: "o2", PID: os.Getpid(), Host: "h"}, time.Hour); err != nil {
		t.Fatalf("Acquire after Delete: %v", err)
	}
	// The run id can be used again from seq 1.
	putN(t, s, "r", 1)
	if err := s.Delete(ctx, "never-existed"); err != nil {
		t.Fatalf("Delete of a missing run: %v", err)
	}
}

func testRuns(t *testing.T, s checkpoint.Store) {
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 0 {
		t.Fatalf("Runs of an empty store = %v, %v", runs, err)
	}
	putN(t, s, "a", 1)
	putN(t, s, "b", 1)
	putN(t, s, "c", 1)
	done := cp("a", 2)
	done.Status = "done"
	put(t, s, done)
	// A lease alone does not make a run.
	if _, err := s.Acquire(ctx, "leased", checkpoint.Owner{ID: "o", Host: "h"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	runs, err = s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	if !reflect.DeepEqual(ids, []string{"a", "c", "b"}) {
		t.Fatalf("Runs = %v, want [a c b] (newest activity first)", ids)
	}
	if r := runs[0]; r.Latest != 2 || r.Status != "done" || !r.Time.Equal(done.Time) {
		t.Fatalf("Runs[0] = %+v, want latest 2, status done, time %v", r, done.Time)
	}
}

// testRunSummaries: Runs returns the latest checkpoint's Summary, never
// an older one's; a failed Put, a Prune and a retried Put leave it; a
// deleted run's does not come back with the id.
func testRunSummaries(t *testing.T, s checkpoint.Store) {
	summaryOf := func(run string) []byte {
		t.Helper()
		runs, err := s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.RunID == run {
				return r.Summary
			}
		}
		t.Fatalf("Runs has no run %s: %+v", run, runs)
		return nil
	}
	with := func(c checkpoint.Checkpoint, sum string) checkpoint.Checkpoint {
		c.Summary = []byte(sum)
		return c
	}
	put(t, s, with(cp("a", 1), "a one"), cp("b", 1))
	if got := summaryOf("a"); string(got) != "a one" {
		t.Fatalf("summary of a = %q, want %q", got, "a one")
	}
	if got := summaryOf("b"); got != nil {
		t.Fatalf("summary of b (none given) = %q, want nil", got)
	}
	long := strings.Repeat("ü", 3000) // 6,000 bytes
	put(t, s, with(cp("a", 2), long))
	if got := summaryOf("a"); string(got) != long {
		t.Fatalf("summary of a after its second checkpoint: %d bytes, want %d", len(got), len(long))
	}
	// A Put that fails changes nothing.
	if err := s.Put(ctx, with(cp("a", 2), "conflict"), checkpoint.PutOptions{}); err == nil {
		t.Fatal("a second Put of a 2 succeeded")
	}
	if err := s.Put(ctx, with(cp("a", 4), "gap"), checkpoint.PutOptions{}); err == nil {
		t.Fatal("a Put whose parent is not the latest succeeded")
	}
	if got := summaryOf("a"); string(got) != long {
		t.Fatalf("summary of a after failed Puts = %.20q…, want the second checkpoint's", got)
	}
	// The latest's, even when it has none.
	put(t, s, cp("a", 3))
	if got := summaryOf("a"); got != nil {
		t.Fatalf("summary of a after a checkpoint without one = %.20q…, want nil", got)
	}
	put(t, s, with(cp("a", 4), "a four"))
	if err := s.Prune(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	if got := summaryOf("a"); string(got) != "a four" {
		t.Fatalf("summary of a after Prune = %q, want %q", got, "a four")
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	put(t, s, cp("a", 1))
	if got := summaryOf("a"); got != nil {
		t.Fatalf("summary of a deleted and started again = %q, want nil", got)
	}
	// Each run its own, whatever the lengths of the ids (a store may
	// order keys by a length prefix), some runs without one.
	for i, n := range []int{1, 2, 9, 126, 127, 128, 129, 200, 255, 256, 300, 1000} {
		for _, c := range "xyz" {
			id := strings.Repeat(string(c), n)
			if (i+int(c))%3 == 0 {
				put(t, s, cp(id, 1))
				continue
			}
			put(t, s, with(cp(id, 1), "summary of "+id))
		}
	}
	for i, n := range []int{1, 2, 9, 126, 127, 128, 129, 200, 255, 256, 300, 1000} {
		for _, c := range "xyz" {
			id := strings.Repeat(string(c), n)
			want := "summary of " + id
			if (i+int(c))%3 == 0 {
				want = ""
			}
			if got := summaryOf(id); string(got) != want {
				t.Errorf("summary of a run id of %d bytes: %.30q, want %.30q", n, got, want)
			}
		}
	}
}

func testLease(t *testing.T, s checkpoint.Store) {
	me := os.Getpid() // alive, so only expiry frees its leases
	o1 := checkpoint.Owner{ID: "o1", PID: me, Host: "h1"}
	o2 := checkpoint.Owner{ID: "o2", PID: me, Host: "h1"}
	l1, err := s.Acquire(ctx, "r", o1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if l1.Token == 0 || l1.RunID != "r" || l1.Owner != o1 {
		t.Fatalf("Acquire = %+v", l1)
	}
	_, err = s.Acquire(ctx, "r", o2, time.Hour)
	var held *checkpoint.LeaseHeldError
	if !errors.As(err, &held) || held.Holder != o1 || held.RunID != "r" {
		t.Fatalf("Acquire of a held lease = %v, want *LeaseHeldError naming o1", err)
	}
	if want := fmt.Sprintf("run r is held by pid %d on host h1", me); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	// Leases are per run.
	if _, err := s.Acquire(ctx, "other", o2, time.Hour); err != nil {
		t.Fatal(err)
	}
	// The holder acquiring again renews, keeping the token.
	again, err := s.Acquire(ctx, "r", o1, 2*time.Hour)
	if err != nil || again.Token != l1.Token {
		t.Fatalf("re-Acquire = %+v, %v; want token %d", again, err, l1.Token)
	}
	renewed, err := s.Renew(ctx, l1, time.Hour)
	if err != nil || renewed.Token != l1.Token || renewed.Owner != o1 {
		t.Fatalf("Renew = %+v, %v", renewed, err)
	}
	if err := s.Release(ctx, renewed); err != nil {
		t.Fatal(err)
	}
	_, err = s.Renew(ctx, l1, time.Hour)
	wantErr(t, err, checkpoint.ErrFenced)
	l2, err := s.Acquire(ctx, "r", o2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if l2.Token <= l1.Token {
		t.Fatalf("new token %d is not greater than the old %d", l2.Token, l1.Token)
	}
	// Releasing or renewing the lost lease does nothing to the new holder.
	if err := s.Release(ctx, l1); err != nil {
		t.Fatalf("Release of a lost lease: %v", err)
	}
	_, err = s.Renew(ctx, l1, time.Hour)
	wantErr(t, err, checkpoint.ErrFenced)
	_, err = s.Acquire(ctx, "r", o1, time.Hour)
	if !errors.As(err, &held) || held.Holder != o2 {
		t.Fatalf("Acquire after a stale Release = %v, want held by o2", err)
	}
	if _, err := s.Renew(ctx, l2, time.Hour); err != nil {
		t.Fatal(err)
	}
}

func testLeaseExpiry(t *testing.T, s checkpoint.Store) {
	me := os.Getpid()
	o1 := checkpoint.Owner{ID: "o1", PID: me, Host: "h1"}
	o2 := checkpoint.Owner{ID: "o2", PID: me, Host: "h2"}
	l1, err := s.Acquire(ctx, "r", o1, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // only ensures the lease has expired
	l2, err := s.Acquire(ctx, "r", o2, time.Hour)
	if err != nil {
		t.Fatalf("Acquire of an expired lease: %v", err)
	}
	if l2.Token <= l1.Token {
		t.Fatalf("token %d after expiry is not greater than %d", l2.Token, l1.Token)
	}
	_, err = s.Renew(ctx, l1, time.Hour)
	wantErr(t, err, checkpoint.ErrFenced)
	wantErr(t, s.Put(ctx, cp("r", 1), checkpoint.PutOptions{Fence: l1.Token}), checkpoint.ErrFenced)
}

// deadPID returns the pid of a child process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a child process: %v", err)
	}
	return cmd.Process.Pid
}

func testLeaseDeadHolder(t *testing.T, s checkpoint.Store) {
	dead := deadPID(t)
	crashed := checkpoint.Owner{ID: "crashed", PID: dead, Host: "h1"}
	old, err := s.Acquire(ctx, "r", crashed, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Same host, holder dead: taken over at once.
	me := checkpoint.Owner{ID: "me", PID: os.Getpid(), Host: "h1"}
	l, err := s.Acquire(ctx, "r", me, time.Hour)
	if err != nil {
		t.Fatalf("Acquire from a dead holder on this host: %v", err)
	}
	if l.Token <= old.Token {
		t.Fatalf("takeover token %d is not greater than %d", l.Token, old.Token)
	}
	// Another host: the pid means nothing here, so wait for expiry.
	remote := checkpoint.Owner{ID: "remote", PID: dead, Host: "h2"}
	if _, err := s.Acquire(ctx, "r2", remote, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, "r2", me, time.Hour)
	var held *checkpoint.LeaseHeldError
	if !errors.As(err, &held) || held.Holder != remote {
		t.Fatalf("Acquire from a holder on another host = %v, want *LeaseHeldError", err)
	}
}

func testFencing(t *testing.T, s checkpoint.Store) {
	me := os.Getpid()
	o1 := checkpoint.Owner{ID: "o1", PID: me, Host: "h"}
	o2 := checkpoint.Owner{ID: "o2", PID: me, Host: "h"}
	// Fence without any lease.
	wantErr(t, s.Put(ctx, cp("r", 1), checkpoint.PutOptions{Fence: 1}), checkpoint.ErrFenced)
	l1, err := s.Acquire(ctx, "r", o1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, cp("r", 1), checkpoint.PutOptions{Fence: l1.Token, Sync: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l1); err != nil {
		t.Fatal(err)
	}
	l2, err := s.Acquire(ctx, "r", o2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Put(ctx, cp("r", 2), checkpoint.PutOptions{Fence: l1.Token}), checkpoint.ErrFenced)
	wantErr(t, s.PutWrites(ctx, "r", 1, []checkpoint.Write{{TaskID: "t"}}, checkpoint.PutOptions{Fence: l1.Token}), checkpoint.ErrFenced)
	if ws, _ := s.Writes(ctx, "r", 1); len(ws) != 0 {
		t.Fatalf("fenced PutWrites stored %v", ws)
	}
	if err := s.Put(ctx, cp("r", 2), checkpoint.PutOptions{Fence: l2.Token}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, "r", 2, []checkpoint.Write{{TaskID: "t"}}, checkpoint.PutOptions{Fence: l2.Token}); err != nil {
		t.Fatal(err)
	}
	// A fence is per run: run r's token does not open run other.
	wantErr(t, s.Put(ctx, cp("other", 1), checkpoint.PutOptions{Fence: l2.Token}), checkpoint.ErrFenced)
	// Unfenced writes are not checked.
	put(t, s, cp("r", 3))
	got, err := s.Latest(ctx, "r")
	if err != nil || got.Seq != 3 {
		t.Fatalf("Latest = %d, %v", got.Seq, err)
	}
}

// testPausedHolder is a holder stopped (SIGSTOP, a long GC pause) past
// its lease while another owner takes the run over and writes: when it
// continues, nothing it writes is stored, whatever seq it writes.
func testPausedHolder(t *testing.T, s checkpoint.Store) {
	me := os.Getpid()
	o1 := checkpoint.Owner{ID: "o1", PID: me, Host: "h1"}
	o2 := checkpoint.Owner{ID: "o2", PID: me, Host: "h2"}
	l1, err := s.Acquire(ctx, "r", o1, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, cp("r", 1), checkpoint.PutOptions{Fence: l1.Token, Sync: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // o1 is paused past its lease
	l2, err := s.Acquire(ctx, "r", o2, time.Hour)
	if err != nil {
		t.Fatalf("Acquire of an expired lease: %v", err)
	}
	mine := cp("r", 2)
	mine.Status = "o2"
	if err := s.Put(ctx, mine, checkpoint.PutOptions{Fence: l2.Token, Sync: true}); err != nil {
		t.Fatal(err)
	}
	// o1 continues where it stopped, and after.
	stale := checkpoint.PutOptions{Fence: l1.Token, Sync: true}
	wantErr(t, s.Put(ctx, cp("r", 2), stale), checkpoint.ErrFenced)
	wantErr(t, s.Put(ctx, cp("r", 3), stale), checkpoint.ErrFenced)
	wantErr(t, s.Put(ctx, mine, stale), checkpoint.ErrFenced) // even o2's very record
	wantErr(t, s.PutWrites(ctx, "r", 2, []checkpoint.Write{{TaskID: "t"}}, stale), checkpoint.ErrFenced)
	_, err = s.Renew(ctx, l1, time.Hour)
	wantErr(t, err, checkpoint.ErrFenced)
	got, err := s.Latest(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, got, mine)
	if ws, err := s.Writes(ctx, "r", 2); err != nil || len(ws) != 0 {
		t.Fatalf("Writes after fenced PutWrites = %v, %v; want none", ws, err)
	}
	if err := s.Put(ctx, cp("r", 3), checkpoint.PutOptions{Fence: l2.Token}); err != nil {
		t.Fatalf("Put of the new holder after the stale writes: %v", err)
	}
}

// testRetriedPut is an ambiguous commit: a Put whose answer was lost (the
// connection dropped after the commit) is sent again. Finding its own
// identical record at that seq, it succeeds; a different record there is
// a conflict.
func testRetriedPut(t *testing.T, s checkpoint.Store) {
	me := os.Getpid()
	l1, err := s.Acquire(ctx, "r", checkpoint.Owner{ID: "o1", PID: me, Host: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	fenced := checkpoint.PutOptions{Fence: l1.Token, Sync: true}
	for seq := uint64(1); seq <= 2; seq++ {
		if err := s.Put(ctx, cp("r", seq), fenced); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, cp("r", seq), fenced); err != nil {
			t.Fatalf("retried Put of seq %d: %v, want success", seq, err)
		}
	}
	other := cp("r", 2)
	other.Status = "other"
	wantErr(t, s.Put(ctx, other, fenced), checkpoint.ErrConflict)
	other = cp("r", 2)
	other.Values = map[string][]byte{"counter": []byte("2"), "payload": append([]byte("X"), big[1:]...)}
	wantErr(t, s.Put(ctx, other, fenced), checkpoint.ErrConflict)
	// Not the latest any more: a late duplicate, not a retry.
	wantErr(t, s.Put(ctx, cp("r", 1), fenced), checkpoint.ErrConflict)
	// Unfenced, the store cannot tell the writer's own record.
	wantErr(t, s.Put(ctx, cp("r", 2), checkpoint.PutOptions{}), checkpoint.ErrConflict)
	got, err := s.Latest(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantSame(t, got, cp("r", 2))
	// The lease changed hands: the old holder's retry is fenced.
	if err := s.Release(ctx, l1); err != nil {
		t.Fatal(err)
	}
	l2, err := s.Acquire(ctx, "r", checkpoint.Owner{ID: "o2", PID: me, Host: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Put(ctx, cp("r", 2), fenced), checkpoint.ErrFenced)
	if err := s.Put(ctx, cp("r", 3), checkpoint.PutOptions{Fence: l2.Token}); err != nil {
		t.Fatal(err)
	}
}

func testConcurrentPut(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 1)
	const writers = 8
	for round := uint64(2); round <= 6; round++ {
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				c := cp("r", round)
				c.Status = fmt.Sprintf("writer %d", i)
				errs[i] = s.Put(ctx, c, checkpoint.PutOptions{})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, checkpoint.ErrConflict):
				t.Fatalf("round %d: writer %d: %v, want ErrConflict", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		got, err := s.Latest(ctx, "r")
		if err != nil || got.Seq != round || got.Status != fmt.Sprintf("writer %d", winner) {
			t.Fatalf("round %d: Latest = seq %d status %q, %v; want the winner's", round, got.Seq, got.Status, err)
		}
	}
}

func testConcurrentAcquire(t *testing.T, s checkpoint.Store) {
	const owners = 8
	for round := range 5 {
		run := fmt.Sprintf("r%d", round)
		leases := make([]checkpoint.Lease, owners)
		errs := make([]error, owners)
		var wg sync.WaitGroup
		for i := range owners {
			wg.Go(func() {
				o := checkpoint.Owner{ID: fmt.Sprintf("o%d", i), PID: os.Getpid(), Host: "h"}
				leases[i], errs[i] = s.Acquire(ctx, run, o, time.Hour)
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			var held *checkpoint.LeaseHeldError
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: owners %d and %d both hold the lease", run, winner, i)
			case err == nil:
				winner = i
			case !errors.As(err, &held):
				t.Fatalf("%s: owner %d: %v, want *LeaseHeldError", run, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: nobody got the lease", run)
		}
		// Only the winner's token writes.
		wrong := checkpoint.PutOptions{Fence: leases[winner].Token + 1}
		wantErr(t, s.Put(ctx, cp(run, 1), wrong), checkpoint.ErrFenced)
		if err := s.Put(ctx, cp(run, 1), checkpoint.PutOptions{Fence: leases[winner].Token}); err != nil {
			t.Fatalf("%s: Put with the winner's token: %v", run, err)
		}
	}
}

// testConcurrentFirstAcquire starts 64 runs at once, as a Runner used by
// many goroutines does, several times over: every first Acquire succeeds,
// the tokens are all different (each is greater than any handed out
// before), each fences only its own run, and a later change of hands still
// gets a greater token.
func testConcurrentFirstAcquire(t *testing.T, s checkpoint.Store) {
	const runs, rounds = 64, 4
	seen := make(map[uint64]string)
	var highest uint64
	for round := range rounds {
		leases := make([]checkpoint.Lease, runs)
		errs := make([]error, runs)
		name := func(i int) string { return fmt.Sprintf("run%d.%d", round, i) }
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range runs {
			wg.Go(func() {
				o := checkpoint.Owner{ID: fmt.Sprintf("o%d", i), PID: os.Getpid(), Host: "h"}
				<-start
				leases[i], errs[i] = s.Acquire(ctx, name(i), o, time.Hour)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Acquire of %s: %v", name(i), err)
			}
			tok := leases[i].Token
			if other, dup := seen[tok]; dup || tok == 0 {
				t.Fatalf("%s got token %d, already given to %s (or zero)", name(i), tok, other)
			}
			seen[tok] = name(i)
			highest = max(highest, tok)
		}
		wg = sync.WaitGroup{}
		for i := range runs {
			wg.Go(func() {
				errs[i] = s.Put(ctx, cp(name(i), 1), checkpoint.PutOptions{Fence: leases[i].Token})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Put on %s with its token: %v", name(i), err)
			}
		}
		// Another run's token does not open this one.
		wantErr(t, s.Put(ctx, cp(name(0), 2), checkpoint.PutOptions{Fence: leases[1].Token}), checkpoint.ErrFenced)
		// The lease changes hands: the new token is greater than all before.
		if err := s.Release(ctx, leases[0]); err != nil {
			t.Fatal(err)
		}
		l, err := s.Acquire(ctx, name(0), checkpoint.Owner{ID: "next", PID: os.Getpid(), Host: "h"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if l.Token <= highest {
			t.Fatalf("token %d after a change of hands is not greater than %d", l.Token, highest)
		}
		seen[l.Token], highest = name(0), l.Token
		wantErr(t, s.Put(ctx, cp(name(0), 2), checkpoint.PutOptions{Fence: leases[0].Token}), checkpoint.ErrFenced)
		if err := s.Put(ctx, cp(name(0), 2), checkpoint.PutOptions{Fence: l.Token}); err != nil {
			t.Fatal(err)
		}
	}
}

func testClosed(t *testing.T, s checkpoint.Store) {
	putN(t, s, "r", 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	wantErr(t, s.Put(ctx, cp("r", 2), checkpoint.PutOptions{}), checkpoint.ErrClosed)
	_, err := s.Latest(ctx, "r")
	wantErr(t, err, checkpoint.ErrClosed)
	_, err = s.Acquire(ctx, "r", checkpoint.Owner{ID: "o"}, time.Hour)
	wantErr(t, err, checkpoint.ErrClosed)
}
