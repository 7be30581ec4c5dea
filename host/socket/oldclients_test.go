package socket

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
)

// An older client's v1 Answer request, as raw bytes on the socket,
// reaches the host as its verdict: a retry sent to a run waiting for its
// plan's approval is refused as a retry (a decision), not taken as an
// approval.
func TestOldClientsAnswerOverTheSocket(t *testing.T) {
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	if _, _, err := Listen(t.Context(), h, h, control.Info{Kind: "run"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(t.Context(), host.RunSpec{RunID: "r-1", PlanFile: f.Plan, Script: f.Script}); err != nil {
		t.Fatal(err)
	}
	cl := control.NewClient(f.Store)
	var res reply[host.Outcome]
	err := cl.Call(t.Context(), "v1.answer", json.RawMessage(`{"run_id":"r-1","approved":true,"decision":"retry"}`), &res)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != host.Usage || !strings.Contains(res.Error.Message, "not for recovery's question") {
		t.Fatalf("a v1 retry to a plan's approval: %+v, want refused as a decision", res)
	}
	res = reply[host.Outcome]{}
	err = cl.Call(t.Context(), "v1.answer", json.RawMessage(`{"run_id":"r-1","approved":true}`), &res)
	if err != nil || res.Error != nil || res.Result.Kind != host.Completed {
		t.Fatalf("a v1 approval: %+v, %v; want the run completed", res, err)
	}
}

// An older client's listing requests, as raw bytes on the socket, are
// answered as it knows them: v1.list with the runs' statuses, v1.runs
// with each run as its summary where it has one, v1.entries with one
// record; each names every run of the store, newest first.
func TestOldClientsListOverTheSocket(t *testing.T) {
	f := hosttest.New(t)
	h := f.Started(t, "r-done", "r-waits")
	if _, _, err := Listen(t.Context(), h, h.Holder("run"), control.Info{Kind: "run"}); err != nil {
		t.Fatal(err)
	}
	cl := control.NewClient(f.Store)
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
