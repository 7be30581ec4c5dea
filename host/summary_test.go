package host

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

func sampleSummary() RunSummary {
	at := time.Date(2026, 3, 1, 9, 0, 0, 123, time.FixedZone("", 3600))
	return RunSummary{Seq: 30, Goal: "a calculator\nthat adds · ü", Slug: "a-calculator", CreatedAt: at, ExecDir: "docs/gaffer/x",
		WorkTree: "/w/r", Status: state.RunHalted, Mode: state.ModePhased, CurrentPhase: -1, ReviewIteration: 3, PlanRevision: 2,
		Phases:    []PhaseSummary{{Status: state.PhaseCompleted, Attempt: 1, Started: at, Completed: at.Add(time.Minute), Commit: "abc"}, {}},
		Usage:     map[string]state.Usage{"developer": {InputTokens: 5, OutputTokens: 6, CachedTokens: 7, CostUSD: 0.1 + 0.2}, "": {}},
		LastError: "boom", Stash: "def", Next: []string{"phase", "review"}}
}

// TestSummaryRoundTrip: a summary reads back as it was written, times in
// their zones and costs to the bit; an empty one too.
func TestSummaryRoundTrip(t *testing.T) {
	for _, want := range []RunSummary{sampleSummary(), {}} {
		b, err := encodeSummary(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeSummary(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(inZones(got), inZones(want)) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
		if !got.CreatedAt.Equal(want.CreatedAt) || got.CreatedAt.Format(time.RFC3339Nano) != want.CreatedAt.Format(time.RFC3339Nano) {
			t.Errorf("created %v, want %v", got.CreatedAt, want.CreatedAt)
		}
	}
}

// inZones is sum with each time in a zone of its offset: a time decoded
// in the local zone (the one of that offset) compares equal.
func inZones(sum RunSummary) RunSummary {
	z := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		_, off := t.Zone()
		return t.In(time.FixedZone("", off))
	}
	sum.CreatedAt = z(sum.CreatedAt)
	sum.Phases = slices.Clone(sum.Phases)
	for i := range sum.Phases {
		sum.Phases[i].Started, sum.Phases[i].Completed = z(sum.Phases[i].Started), z(sum.Phases[i].Completed)
	}
	return sum
}

// TestSummaryRefusesWhatItDidNotWrite: another version, a cut record and
// trailing bytes are errors (the run's state is read instead).
func TestSummaryRefusesWhatItDidNotWrite(t *testing.T) {
	b, _ := encodeSummary(sampleSummary())
	bad := map[string][]byte{
		"empty":        nil,
		"json":         []byte(`{"v":1}`),
		"next version": append([]byte{summaryVersion + 1}, b[1:]...),
		"cut":          b[:len(b)/2],
		"cut by one":   b[:len(b)-1],
		"trailing":     append(append([]byte(nil), b...), 0),
	}
	for name, in := range bad {
		if _, err := decodeSummary(in); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzSummary: any bytes decode to a summary or an error, never a panic
// or a huge allocation; what decodes encodes back to the same bytes.
func FuzzSummary(f *testing.F) {
	b, _ := encodeSummary(sampleSummary())
	f.Add(b)
	e, _ := encodeSummary(RunSummary{})
	f.Add(e)
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, in []byte) {
		sum, err := decodeSummary(in)
		if err != nil {
			return
		}
		again, err := encodeSummary(sum)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := decodeSummary(again)
		if err != nil || !reflect.DeepEqual(back, sum) {
			t.Fatalf("decode(encode(decode(in))) = %+v, %v; want %+v", back, err, sum)
		}
	})
}

// TestListThroughTheSocketIsTheLocalList: the socket carries a listed
// run as its summary and a run on an interrupt whole; the client's List
// is the holder's, field for field, and a summary this binary cannot read
// is asked for whole.
func TestListThroughTheSocketIsTheLocalList(t *testing.T) {
	f := newFixture(t)
	h := f.started(t, "r-done", "r-waits")
	ctx := t.Context()
	local, err := h.List(ctx, ListRequest{})
	if err != nil || len(local) != 2 {
		t.Fatalf("List = %d runs, %v", len(local), err)
	}
	var src *checkpoint.RunInfo
	for _, e := range local {
		if e.info != nil {
			if src != nil {
				t.Fatal("two runs listed through their summaries, want the finished one")
			}
			src = e.info
		}
	}
	if src == nil {
		t.Fatal("no run listed through its summary, want the finished one")
	}
	if _, _, err := h.Listen(ctx, "test", h); err != nil {
		t.Fatal(err)
	}
	remote, err := NewClient(f.store).List(ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(StatusesOf(local))
	got, _ := json.Marshal(StatusesOf(remote))
	if string(got) != string(want) {
		t.Fatalf("List through the socket:\n%s\nwant:\n%s", got, want)
	}

	// A summary of another version: the client asks for the run.
	c := NewClient(f.store)
	info := *src
	info.Summary = append([]byte{summaryVersion + 1}, info.Summary[1:]...)
	rs, err := c.unlisted(ctx, listedRun{Info: &info, Status: "completed"})
	if err != nil || rs.Snapshot.RunID != info.RunID || len(rs.Snapshot.State.Plan.Tasks) == 0 {
		t.Fatalf("a summary of another version: %+v, %v; want the run's whole status", rs.Snapshot.RunID, err)
	}
}

// BenchmarkSummary is the cost a summary adds to each checkpoint (made)
// and to each run of a listing (read): per operation, with allocations.
func BenchmarkSummary(b *testing.B) {
	sum := sampleSummary()
	phases := make([]state.Phase, len(sum.Phases))
	progress := make([]state.PhaseState, len(sum.Phases))
	for i, p := range sum.Phases {
		phases[i] = state.Phase{Index: i, TaskIDs: []string{"1", "2"}}
		progress[i] = state.PhaseState{Index: i, Status: p.Status, Attempt: p.Attempt, StartedAt: p.Started, CompletedAt: p.Completed, PostCommit: p.Commit}
	}
	snap := graph.Snapshot[state.ExecutionState]{RunID: "r-20260301-abcdef", Seq: 30, Next: sum.Next, State: state.ExecutionState{
		Run:  state.RunInfo{ID: "r-20260301-abcdef", Goal: sum.Goal, CreatedAt: sum.CreatedAt, ExecDir: sum.ExecDir, WorkTree: sum.WorkTree},
		Plan: state.Plan{Mode: sum.Mode, Phases: phases}, Progress: state.Progress{Phases: progress, CurrentPhase: 1},
		Usage: sum.Usage, Status: sum.Status, Errors: []string{"boom"}}}
	enc, err := summarize(snap)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("make", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := summarize(snap); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(enc)), "bytes")
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		info := checkpoint.RunInfo{RunID: snap.RunID, Latest: 30, Status: graph.StatusRunning, Summary: enc}
		for b.Loop() {
			if _, ok := fromSummary(info); !ok {
				b.Fatal("not read")
			}
		}
	})
}

// TestStaleSummaryIsNotRead: a summary made for another checkpoint than
// the run's latest (one an older gaffer's Delete left behind, for a run id
// used again) is not the run's: the run is read whole.
func TestStaleSummaryIsNotRead(t *testing.T) {
	sum := sampleSummary()
	b, err := encodeSummary(sum)
	if err != nil {
		t.Fatal(err)
	}
	info := checkpoint.RunInfo{RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning, Summary: b}
	if _, ok := fromSummary(info); !ok {
		t.Fatal("the latest checkpoint's summary was not read")
	}
	for _, latest := range []uint64{sum.Seq - 1, sum.Seq + 1} {
		info.Latest = latest
		if _, ok := fromSummary(info); ok {
			t.Errorf("a summary of checkpoint %d was read for checkpoint %d", sum.Seq, latest)
		}
	}
}

// TestLongPlanHasNoSummary: a run of a plan longer than summaryMaxPhases
// carries no summary (each step would write its every phase) and a
// listing reads it whole; one at the bound has one.
func TestLongPlanHasNoSummary(t *testing.T) {
	for _, n := range []int{summaryMaxPhases, summaryMaxPhases + 1, 1000} {
		var s state.ExecutionState
		s.Run = state.RunInfo{ID: "r", Goal: "long"}
		s.Plan.Phases = make([]state.Phase, n)
		s.Progress.Phases = make([]state.PhaseState, n)
		snap := graph.Snapshot[state.ExecutionState]{RunID: "r", Seq: 3, State: s, Status: graph.StatusRunning}
		sum, err := summarize(snap)
		if err != nil {
			t.Fatal(err)
		}
		_, listed, err := Listed(snap)
		if want := n <= summaryMaxPhases; (sum != nil) != want || listed != want || err != nil {
			t.Errorf("%d phases: summary of %d bytes, listed through it %v (%v); want %v", n, len(sum), listed, err, want)
		}
	}
}

// TestEntriesAreTheRuns: List lists every run, newest first, with the
// status Status tells of it: a run through its summary, which stands for
// the snapshot Listed makes of the run's state, and a run on an interrupt
// whole, as Status has it. Through the socket the entries are the
// holder's.
func TestEntriesAreTheRuns(t *testing.T) {
	f := newFixture(t)
	h := f.started(t, "r-done", "r-waits", "r-done-too")
	ctx := t.Context()
	es, err := h.List(ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(how string, es []ListEntry) {
		t.Helper()
		if len(es) != 3 {
			t.Fatalf("%s: %d entries, want 3", how, len(es))
		}
		summaries := 0
		for i, e := range es {
			r, err := h.Status(ctx, RunRequest{RunID: e.RunID})
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && es[i-1].CreatedAt().Before(e.CreatedAt()) {
				t.Errorf("%s: %s is listed after the older %s", how, e.RunID, es[i-1].RunID)
			}
			if e.Seq != r.Snapshot.Seq || e.Status != r.Status || e.Stopped != r.Stopped || e.LastError != r.LastError {
				t.Errorf("%s: entry %d is %s seq %d %q, Status's %s seq %d %q", how, i, e.RunID, e.Seq, e.Status, r.Snapshot.RunID, r.Snapshot.Seq, r.Status)
			}
			want := r
			switch {
			case e.Summary != nil && e.Whole == nil:
				summaries++
				listed, ok, err := Listed(r.Snapshot)
				if !ok || err != nil {
					t.Fatalf("%s: %s is listed through its summary, and Listed reads it whole: %v", how, e.RunID, err)
				}
				want.Snapshot = listed
			case e.Whole != nil && e.Summary == nil:
			default:
				t.Errorf("%s: entry %s has a summary %v and a whole run %v", how, e.RunID, e.Summary != nil, e.Whole != nil)
			}
			got, _ := json.Marshal(e.RunStatus())
			wj, _ := json.Marshal(want)
			if string(got) != string(wj) {
				t.Errorf("%s: %s's RunStatus:\n%s\nwant:\n%s", how, e.RunID, got, wj)
			}
		}
		if summaries != 2 {
			t.Errorf("%s: %d runs through their summaries, want the 2 finished ones", how, summaries)
		}
	}
	check("local", es)
	if _, _, err := h.Listen(ctx, "test", h); err != nil {
		t.Fatal(err)
	}
	remote, err := NewClient(f.store).List(ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	check("through the socket", remote)
}

// TestEntryViewIsTheState: the choice of "the newest run" of a kind, made
// on entries, sees what the state says: the status a person is told and
// whether the user's changes are still to be put back, through a summary
// or whole.
func TestEntryViewIsTheState(t *testing.T) {
	for _, st := range []state.RunStatus{state.RunRunning, state.RunCompleted, state.RunFailed, state.RunHalted, state.RunCancelled} {
		for _, stash := range []state.UserStash{{}, {Commit: "abc"}, {Commit: "abc", Restored: true}} {
			snap := graph.Snapshot[state.ExecutionState]{RunID: "r", Seq: 3, Status: graph.StatusDone,
				State: state.ExecutionState{Run: state.RunInfo{ID: "r"}, Status: st, Stash: stash}}
			e, ok, err := ListedEntry(snap)
			if err != nil || !ok {
				t.Fatalf("ListedEntry: %v, %v", ok, err)
			}
			whole := EntriesOf([]RunStatus{{Snapshot: snap}})[0]
			for how, e := range map[string]ListEntry{"summary": e, "whole": whole} {
				if v, stashed := e.view(); v != ViewStatus(snap) || stashed != stash.Pending() {
					t.Errorf("%s of %s, stash %+v: view %s, stashed %v", how, st, stash, v, stashed)
				}
			}
		}
	}
}

// TestEntriesRecord: the entries operation's record gives back the runs
// it was made of, through their summaries or whole, and refuses every
// cut of it and a record of another version, without a panic.
func TestEntriesRecord(t *testing.T) {
	f := newFixture(t)
	h := f.started(t, "r-done", "r-waits")
	ctx := t.Context()
	es, err := h.List(ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeEntries(es)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := decodeEntries(b)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]listedRun, len(es))
	for i := range es {
		want[i] = listedOf(&es[i])
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(lr)
	if string(gj) != string(wj) {
		t.Fatalf("entries back from their record:\n%s\nwant:\n%s", gj, wj)
	}
	for n := range len(b) {
		if _, err := decodeEntries(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes was read", n, len(b))
		}
	}
	if _, err := decodeEntries(append([]byte{entriesVersion + 1}, b[1:]...)); err == nil {
		t.Fatal("a record of another version was read")
	}
}

// FuzzEntries: decodeEntries reads any record, from a holder of any
// version, without a panic; what it reads, encoded again from its
// entries, reads back the same.
func FuzzEntries(f *testing.F) {
	sum, _ := encodeSummary(sampleSummary())
	info := &checkpoint.RunInfo{RunID: "r-1", Latest: 30, Status: "done", Time: time.Unix(1e9, 0).UTC(), Summary: sum}
	b, _ := encodeEntries([]ListEntry{{RunID: "r-1", Seq: 30, Status: "completed", info: info},
		{RunID: "r-2", Whole: &RunStatus{Status: "awaiting_approval"}}})
	f.Add(b)
	f.Add([]byte{entriesVersion, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		lr, err := decodeEntries(in)
		if err != nil {
			return
		}
		es := make([]ListEntry, len(lr))
		for i, r := range lr {
			es[i] = ListEntry{Whole: r.Whole, Status: r.Status, Stopped: r.Stopped, LastError: r.LastError, info: r.Info}
		}
		again, err := encodeEntries(es)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := decodeEntries(again)
		bj, _ := json.Marshal(back)
		lj, _ := json.Marshal(lr)
		if err != nil || string(bj) != string(lj) {
			t.Fatalf("decode(encode(decode(in))) = %s, %v; want %s", bj, err, lj)
		}
	})
}

// started opens f's store with a run of f's plan for each id, driven to
// its end, or left waiting for its plan's approval when the id ends in
// "waits".
func (f *fixture) started(t *testing.T, ids ...string) *Host {
	t.Helper()
	h := f.open(t)
	for _, id := range ids {
		spec := RunSpec{RunID: id, PlanFile: f.plan, Script: f.script, AutoApprove: !strings.HasSuffix(id, "waits")}
		if _, err := h.Start(t.Context(), spec); err != nil {
			t.Fatal(err)
		}
	}
	return h
}
