package socket

import (
	"encoding/json"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/host/listing"
)

func TestListThroughTheSocketIsTheLocalList(t *testing.T) {
	f := hosttest.New(t)
	h := f.Started(t, "r-done", "r-waits")
	ctx := t.Context()
	local, err := h.List(ctx, host.ListRequest{})
	if err != nil || len(local) != 2 {
		t.Fatalf("List = %d runs, %v", len(local), err)
	}
	var src *checkpoint.RunInfo
	for _, e := range local {
		if e.Record != nil {
			if src != nil {
				t.Fatal("two runs listed through their summaries, want the finished one")
			}
			src = e.Record
		}
	}
	if src == nil {
		t.Fatal("no run listed through its summary, want the finished one")
	}
	if _, _, err := Listen(ctx, h, h, control.Info{Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	remote, err := NewClient(f.Store).List(ctx, host.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(host.StatusesOf(local))
	got, _ := json.Marshal(host.StatusesOf(remote))
	if string(got) != string(want) {
		t.Fatalf("List through the socket:\n%s\nwant:\n%s", got, want)
	}

	// A summary of another version: the client asks for the run.
	c := NewClient(f.Store)
	info := *src
	info.Summary = append([]byte{listing.Version + 1}, info.Summary[1:]...)
	rs, err := c.unlisted(ctx, listedRun{Info: &info, Status: "completed"})
	if err != nil || rs.Snapshot.RunID != info.RunID || len(rs.Snapshot.State.Plan.Tasks) == 0 {
		t.Fatalf("a summary of another version: %+v, %v; want the run's whole status", rs.Snapshot.RunID, err)
	}
}

func TestEntriesAreTheRuns(t *testing.T) {
	f := hosttest.New(t)
	h := f.Started(t, "r-done", "r-waits", "r-done-too")
	ctx := t.Context()
	es, err := h.List(ctx, host.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(how string, es []host.ListEntry) {
		t.Helper()
		if len(es) != 3 {
			t.Fatalf("%s: %d entries, want 3", how, len(es))
		}
		summaries := 0
		for i, e := range es {
			r, err := h.Status(ctx, host.RunRequest{RunID: e.RunID})
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
				listed, ok, err := listing.Listed(r.Snapshot)
				if !ok || err != nil {
					t.Fatalf("%s: %s is listed through its summary, and host.Listed reads it whole: %v", how, e.RunID, err)
				}
				want.Snapshot = listed
			case e.Whole != nil && e.Summary == nil:
			default:
				t.Errorf("%s: entry %s has a summary %v and a whole run %v", how, e.RunID, e.Summary != nil, e.Whole != nil)
			}
			got, _ := json.Marshal(e.RunStatus())
			wj, _ := json.Marshal(want)
			if string(got) != string(wj) {
				t.Errorf("%s: %s's host.RunStatus:\n%s\nwant:\n%s", how, e.RunID, got, wj)
			}
		}
		if summaries != 2 {
			t.Errorf("%s: %d runs through their summaries, want the 2 finished ones", how, summaries)
		}
	}
	check("local", es)
	if _, _, err := Listen(ctx, h, h, control.Info{Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	remote, err := NewClient(f.Store).List(ctx, host.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	check("through the socket", remote)
}
