package host

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/control"
)

// The verdict crosses the socket and the journal in the v1 format: what
// an older client sends, and what an older serve journaled (a
// nodes.Answer, before decisions were kept), reads as the same verdict;
// and what this one writes, an older one reads as it always did.
func TestVerdictReadsAndWritesTheV1Format(t *testing.T) {
	for _, c := range []struct {
		wire string
		want AnswerRequest
	}{
		// gaffer approve / reject of v1, over the socket.
		{`{"run_id":"r-1","approved":true,"feedback":"ok"}`, AnswerRequest{RunID: "r-1", Verdict: Approve, Feedback: "ok"}},
		{`{"run_id":"r-1","approved":false,"feedback":"smaller"}`, AnswerRequest{RunID: "r-1", Verdict: Reject, Feedback: "smaller"}},
		// gaffer approve --decision of v1 sent approved: true; the inbox's stop false.
		{`{"run_id":"r-1","approved":true,"decision":"retry","feedback":"use big.Int"}`, AnswerRequest{RunID: "r-1", Verdict: Retry, Feedback: "use big.Int"}},
		{`{"run_id":"r-1","approved":true,"decision":"stop"}`, AnswerRequest{RunID: "r-1", Verdict: Stop}},
		{`{"run_id":"r-1","approved":false,"decision":"stop"}`, AnswerRequest{RunID: "r-1", Verdict: Stop}},
		// A journal's answer of a serve before verdicts: a nodes.Answer.
		{`{"approved":true}`, AnswerRequest{Verdict: Approve}},
		{`{"approved":false,"feedback":"no"}`, AnswerRequest{Verdict: Reject, Feedback: "no"}},
	} {
		var got AnswerRequest
		if err := json.Unmarshal([]byte(c.wire), &got); err != nil || got != c.want {
			t.Errorf("%s: read %+v, %v; want %+v", c.wire, got, err, c.want)
		}
	}
	var bad AnswerRequest
	if err := json.Unmarshal([]byte(`{"approved":true,"decision":"maybe"}`), &bad); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Errorf("an unknown decision: %v, want it refused by name", err)
	}

	// What this version writes, read as v1 read it.
	for v, want := range map[Verdict]answerWire{
		Approve: {RunID: "r-1", Approved: true},
		Reject:  {RunID: "r-1"},
		Retry:   {RunID: "r-1", Approved: true, Decision: "retry"},
		Stop:    {RunID: "r-1", Approved: true, Decision: "stop"},
	} {
		b, err := json.Marshal(AnswerRequest{RunID: "r-1", Verdict: v})
		if err != nil {
			t.Fatal(err)
		}
		var got answerWire
		if err := json.Unmarshal(b, &got); err != nil || got != want {
			t.Errorf("%s writes %s, want %+v", v, b, want)
		}
		if p, err := ParseVerdict(v.String()); err != nil || p != v {
			t.Errorf("ParseVerdict(%q) = %v, %v", v.String(), p, err)
		}
	}
	if _, err := ParseVerdict("maybe"); err == nil {
		t.Error("ParseVerdict(maybe) succeeded")
	}
}

// An older client's v1 Answer request, as raw bytes on the socket,
// reaches the host as its verdict: a retry sent to a run waiting for its
// plan's approval is refused as a retry (a decision), not taken as an
// approval.
func TestOldClientsAnswerOverTheSocket(t *testing.T) {
	f := newFixture(t)
	h := f.open(t)
	if _, _, err := h.Listen(t.Context(), "run", h); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(t.Context(), RunSpec{RunID: "r-1", PlanFile: f.plan, Script: f.script}); err != nil {
		t.Fatal(err)
	}
	cl := control.NewClient(f.store)
	var res reply[Outcome]
	err := cl.Call(t.Context(), "v1.answer", json.RawMessage(`{"run_id":"r-1","approved":true,"decision":"retry"}`), &res)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != Usage || !strings.Contains(res.Error.Message, "not for recovery's question") {
		t.Fatalf("a v1 retry to a plan's approval: %+v, want refused as a decision", res)
	}
	res = reply[Outcome]{}
	err = cl.Call(t.Context(), "v1.answer", json.RawMessage(`{"run_id":"r-1","approved":true}`), &res)
	if err != nil || res.Error != nil || res.Result.Kind != Completed {
		t.Fatalf("a v1 approval: %+v, %v; want the run completed", res, err)
	}
}

// An older client's listing requests, as raw bytes on the socket, are
// answered as it knows them: v1.list with the runs' statuses, v1.runs
// with each run as its summary where it has one, v1.entries with one
// record; each names every run of the store, newest first.
func TestOldClientsListOverTheSocket(t *testing.T) {
	f := newFixture(t)
	h := f.started(t, "r-done", "r-waits")
	if _, _, err := h.Listen(t.Context(), "run", h.Holder()); err != nil {
		t.Fatal(err)
	}
	cl := control.NewClient(f.store)
	want := []string{"r-waits", "r-done"}
	ids := func(op string, got []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: runs %v, want %v", op, got, want)
		}
	}

	var list struct {
		Result []struct {
			Snapshot struct {
				RunID string
			} `json:"snapshot"`
			Status string `json:"status"`
		} `json:"result"`
		Error *wireError `json:"error"`
	}
	if err := cl.Call(t.Context(), "v1.list", json.RawMessage(`{}`), &list); err != nil || list.Error != nil {
		t.Fatalf("v1.list: %v %+v", err, list.Error)
	}
	var got []string
	for _, r := range list.Result {
		got = append(got, r.Snapshot.RunID)
		if r.Status == "" {
			t.Errorf("v1.list: run %s without its status", r.Snapshot.RunID)
		}
	}
	ids("v1.list", got)

	var runs struct {
		Result []struct {
			Info *struct {
				RunID   string
				Summary []byte
			} `json:"info"`
			Whole *struct {
				Snapshot struct {
					RunID string
				} `json:"snapshot"`
			} `json:"whole"`
		} `json:"result"`
		Error *wireError `json:"error"`
	}
	if err := cl.Call(t.Context(), "v1.runs", nil, &runs); err != nil || runs.Error != nil {
		t.Fatalf("v1.runs: %v %+v", err, runs.Error)
	}
	got = nil
	for _, r := range runs.Result {
		switch {
		case r.Info != nil && len(r.Info.Summary) > 0:
			got = append(got, r.Info.RunID)
		case r.Whole != nil:
			got = append(got, r.Whole.Snapshot.RunID)
		}
	}
	ids("v1.runs", got)

	var entries struct {
		Result struct {
			Blob []byte `json:"blob"`
		} `json:"result"`
		Error *wireError `json:"error"`
	}
	if err := cl.Call(t.Context(), "v1.entries", json.RawMessage(`{}`), &entries); err != nil || entries.Error != nil {
		t.Fatalf("v1.entries: %v %+v", err, entries.Error)
	}
	lr, err := unpackEntries(entries.Result.Blob)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range lr {
		if r.Info != nil {
			got = append(got, r.Info.RunID)
		} else {
			got = append(got, r.Whole.Snapshot.RunID)
		}
	}
	ids("v1.entries", got)
}
