package listing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

func sampleSummary() Summary {
	at := time.Date(2026, 3, 1, 9, 0, 0, 123, time.FixedZone("", 3600))
	return Summary{Seq: 30, Goal: "a calculator\nthat adds · ü", Slug: "a-calculator", CreatedAt: at, ExecDir: "docs/gaffer/x",
		WorkTree: "/w/r", Status: state.RunHalted, Mode: state.ModePhased, CurrentPhase: -1, ReviewIteration: 3, PlanRevision: 2,
		Phases:    []Phase{{Status: state.PhaseCompleted, Attempt: 1, Started: at, Completed: at.Add(time.Minute), Commit: "abc"}, {}},
		Usage:     []RoleUsage{{Role: ""}, {Role: "developer", Usage: state.Usage{InputTokens: 5, OutputTokens: 6, CachedTokens: 7, CostUSD: 0.1 + 0.2}}},
		LastError: "boom", Stash: "def", Next: []string{"phase", "review"}, Lanes: 3}
}

func TestSummaryRoundTrip(t *testing.T) {
	for _, want := range []Summary{sampleSummary(), {}} {
		b, err := Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
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

func inZones(sum Summary) Summary {
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

func TestSummaryRefusesWhatItDidNotWrite(t *testing.T) {
	b, _ := Encode(sampleSummary())
	bad := map[string][]byte{
		"empty":        nil,
		"json":         []byte(`{"v":1}`),
		"next version": append([]byte{Version + 1}, b[1:]...),
		"cut":          b[:len(b)/2],
		"cut by one":   b[:len(b)-1],
		"trailing":     append(append([]byte(nil), b...), 0),
	}
	for name, in := range bad {
		if _, err := Decode(in); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzSummary(f *testing.F) {
	b, _ := Encode(sampleSummary())
	f.Add(b)
	e, _ := Encode(Summary{})
	f.Add(e)
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, in []byte) {
		sum, err := Decode(in)
		var head Summary
		herr := decodeTo(in, "", &head, nil, true)
		if (err == nil) != (herr == nil) {
			t.Fatalf("decode: %v; its head: %v", err, herr)
		}
		var shared Summary
		serr := decodeTo(in, unsafe.String(unsafe.SliceData(in), len(in)), &shared, nil, false)
		if (err == nil) != (serr == nil) || err == nil && !reflect.DeepEqual(shared, sum) {
			t.Fatalf("decode: %+v, %v; shared: %+v, %v", sum, err, shared, serr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(head, headOf(sum)) {
			t.Fatalf("head %+v; want %+v", head, headOf(sum))
		}
		again, err := Encode(sum)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := Decode(again)
		if err != nil {
			t.Fatalf("decode(encode(decode(in))): %v", err)
		}
		// Compared as encoded: a cost may be NaN, which DeepEqual finds
		// unequal to itself.
		if third, _ := Encode(back); !bytes.Equal(third, again) {
			t.Fatalf("decode(encode(decode(in))) = %+v; want %+v", back, sum)
		}
	})
}

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
		Plan: state.Plan{Mode: sum.Mode, Phases: phases}, Progress: state.Progress{Phases: progress},
		Usage: sum.UsageMap(), Status: sum.Status, Errors: []string{"boom"}}}
	enc, err := Summarize(snap)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("make", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Summarize(snap); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(enc)), "bytes")
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		info := checkpoint.RunInfo{RunID: snap.RunID, Latest: 30, Status: graph.StatusRunning, Summary: enc}
		for b.Loop() {
			if _, ok := FromRecord(info); !ok {
				b.Fatal("not read")
			}
		}
	})
}

func TestStaleSummaryIsNotRead(t *testing.T) {
	sum := sampleSummary()
	b, err := Encode(sum)
	if err != nil {
		t.Fatal(err)
	}
	info := checkpoint.RunInfo{RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning, Summary: b}
	if _, ok := FromRecord(info); !ok {
		t.Fatal("the latest checkpoint's summary was not read")
	}
	for _, latest := range []uint64{sum.Seq - 1, sum.Seq + 1} {
		info.Latest = latest
		if _, ok := FromRecord(info); ok {
			t.Errorf("a summary of checkpoint %d was read for checkpoint %d", sum.Seq, latest)
		}
	}
}

func TestLongPlanHasNoSummary(t *testing.T) {
	for _, n := range []int{MaxPhases, MaxPhases + 1, 1000} {
		var s state.ExecutionState
		s.Run = state.RunInfo{ID: "r", Goal: "long"}
		s.Plan.Phases = make([]state.Phase, n)
		s.Progress.Phases = make([]state.PhaseState, n)
		snap := graph.Snapshot[state.ExecutionState]{RunID: "r", Seq: 3, State: s, Status: graph.StatusRunning}
		sum, err := Summarize(snap)
		if err != nil {
			t.Fatal(err)
		}
		_, listed, err := Listed(snap)
		if want := n <= MaxPhases; (sum != nil) != want || listed != want || err != nil {
			t.Errorf("%d phases: summary of %d bytes, listed through it %v (%v); want %v", n, len(sum), listed, err, want)
		}
	}
}

// TestRowsRecord: a listing's record gives back the rows it was made of,
// through their summaries or whole, and refuses every cut of it and a
// record of another version, without a panic.
func TestRowsRecord(t *testing.T) {
	sum, _ := Encode(sampleSummary())
	rows := []Row{
		{Info: &checkpoint.RunInfo{RunID: "r-1", Latest: 30, Status: "done", Time: time.Unix(1e9, 0).UTC(), Summary: sum},
			Status: "completed", Stopped: true, LastError: "boom"},
		{Whole: []byte(`{"status":"awaiting_approval"}`)},
		{Info: &checkpoint.RunInfo{RunID: "r-3", Latest: 2, Status: "running"}, Status: "running"},
	}
	b, err := EncodeRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRows(b)
	if err != nil {
		t.Fatal(err)
	}
	wj, _ := json.Marshal(rows)
	gj, _ := json.Marshal(back)
	if string(gj) != string(wj) {
		t.Fatalf("rows back from their record:\n%s\nwant:\n%s", gj, wj)
	}
	for n := range len(b) {
		if _, err := DecodeRows(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes was read", n, len(b))
		}
	}
	if _, err := DecodeRows(append([]byte{rowsVersion + 1}, b[1:]...)); err == nil {
		t.Fatal("a record of another version was read")
	}
}

// FuzzRows: DecodeRows reads any record, from a holder of any version,
// without a panic; what it reads, encoded again, reads back the same.
func FuzzRows(f *testing.F) {
	sum, _ := Encode(sampleSummary())
	info := &checkpoint.RunInfo{RunID: "r-1", Latest: 30, Status: "done", Time: time.Unix(1e9, 0).UTC(), Summary: sum}
	b, _ := EncodeRows([]Row{{Info: info, Status: "completed"}, {Whole: []byte(`{"status":"awaiting_approval"}`)}})
	f.Add(b)
	f.Add([]byte{rowsVersion, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, err := DecodeRows(in)
		if err != nil {
			return
		}
		again, err := EncodeRows(rows)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := DecodeRows(again)
		bj, _ := json.Marshal(back)
		rj, _ := json.Marshal(rows)
		if err != nil || string(bj) != string(rj) {
			t.Fatalf("decode(encode(decode(in))) = %s, %v; want %s", bj, err, rj)
		}
	})
}

// headOf is what ReadHead keeps of sum.
func headOf(sum Summary) Summary {
	return Summary{Seq: sum.Seq, CreatedAt: sum.CreatedAt, Status: sum.Status, Mode: sum.Mode, CurrentPhase: sum.CurrentPhase,
		ReviewIteration: sum.ReviewIteration, PlanRevision: sum.PlanRevision, Stash: sum.Stash, Lanes: sum.Lanes}
}

// TestHeadReadsWhatReadReads: ReadHead keeps a summary's head as Read
// reads it, and refuses every record Read refuses (every cut of one,
// another version, a stale one, a run waiting on an interrupt), so that
// choosing "the newest run" reads the same runs whole as list does.
// ReadShared (a listing's) reads what Read reads, and refuses the same.
func TestHeadReadsWhatReadReads(t *testing.T) {
	for _, sum := range []Summary{sampleSummary(), {Seq: 4}, {Seq: 5, Stash: ""}} {
		b, err := Encode(sum)
		if err != nil {
			t.Fatal(err)
		}
		info := checkpoint.RunInfo{RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning, Summary: b}
		var whole, head, shared Summary
		var sl Slabs
		if !Read(info, &whole, nil) || !ReadHead(info, &head) || !ReadShared(info, &shared, &sl) {
			t.Fatalf("%+v: not read", sum)
		}
		if !reflect.DeepEqual(inZones(head), inZones(headOf(whole))) {
			t.Errorf("head:\n got %+v\nwant %+v", head, headOf(whole))
		}
		if !reflect.DeepEqual(inZones(shared), inZones(whole)) {
			t.Errorf("shared:\n got %+v\nwant %+v", shared, whole)
		}
		cases := map[string]checkpoint.RunInfo{
			"stale":       {RunID: "r", Latest: sum.Seq + 1, Status: graph.StatusRunning, Summary: b},
			"interrupted": {RunID: "r", Latest: sum.Seq, Status: graph.StatusInterrupted, Summary: b},
			"none":        {RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning},
			"next version": {RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning,
				Summary: append([]byte{Version + 1}, b[1:]...)},
			"trailing": {RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning, Summary: append(append([]byte(nil), b...), 0)},
		}
		for n := range len(b) {
			cases[fmt.Sprintf("cut to %d", n)] = checkpoint.RunInfo{RunID: "r", Latest: sum.Seq, Status: graph.StatusRunning, Summary: b[:n]}
		}
		for name, in := range cases {
			var w, h, sh Summary
			if r, rh, rs := Read(in, &w, nil), ReadHead(in, &h), ReadShared(in, &sh, nil); r || rh || rs {
				t.Errorf("%s: read %v, head read %v, shared read %v", name, r, rh, rs)
			}
		}
	}
}

// TestRunReadAloneAllocatesItsOwn: a summary read without slabs (a run
// read alone: FromRecord) makes lists of its own size, not slabs for 512
// runs.
func TestRunReadAloneAllocatesItsOwn(t *testing.T) {
	b, _ := Encode(sampleSummary())
	info := checkpoint.RunInfo{RunID: "r", Latest: 30, Status: graph.StatusRunning, Summary: b}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	const reads = 100
	for range reads {
		if _, ok := FromRecord(info); !ok {
			t.Fatal("not read")
		}
	}
	runtime.ReadMemStats(&ms1)
	if per := (ms1.TotalAlloc - ms0.TotalAlloc) / reads; per > 16<<10 {
		t.Errorf("a run read alone allocated %d bytes", per)
	}
}

// TestUsageListIsTheMap: a summary keeps the state's usage as a list
// sorted by role, whose map is the state's and whose total is
// state.TotalOf's, to the last bit of the cost (a float sum depends on
// its order).
func TestUsageListIsTheMap(t *testing.T) {
	usage := map[string]state.Usage{"reviewer": {InputTokens: 3, CostUSD: 0.1}, "developer": {OutputTokens: 9, CostUSD: 0.2},
		"architect": {CachedTokens: 4, CostUSD: 0.3}, "doctor": {CostUSD: 1e-17}, "": {}}
	snap := graph.Snapshot[state.ExecutionState]{RunID: "r-1", Seq: 4, State: state.ExecutionState{Usage: usage}}
	b, err := Summarize(snap)
	if err != nil {
		t.Fatal(err)
	}
	var sl Slabs
	for _, sl := range []*Slabs{nil, &sl} {
		var sum Summary
		if !Read(checkpoint.RunInfo{RunID: "r-1", Latest: 4, Summary: b}, &sum, sl) {
			t.Fatal("the summary was not read")
		}
		if !slices.IsSortedFunc(sum.Usage, func(a, b RoleUsage) int { return strings.Compare(a.Role, b.Role) }) {
			t.Errorf("usage not sorted by role: %+v", sum.Usage)
		}
		if got := sum.UsageMap(); !reflect.DeepEqual(got, usage) {
			t.Errorf("UsageMap %+v, want %+v", got, usage)
		}
		if got, want := sum.TotalUsage(), state.TotalOf(usage); got != want {
			t.Errorf("TotalUsage %+v, want TotalOf's %+v", got, want)
		}
	}
	var none Summary
	if none.UsageMap() != nil || none.TotalUsage() != (state.Usage{}) {
		t.Errorf("no usage: map %v, total %+v", none.UsageMap(), none.TotalUsage())
	}
}
