package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host/listing"
	"github.com/gaffer-dev/gaffer/state"
)

// ListEntry is one run of a listing of many runs (List): the run's
// summary when the store keeps one for its latest checkpoint, the run
// read whole otherwise (one waiting on a person, one of a plan too long
// for a summary, one an older gaffer wrote). A summary and its entry take
// about 600 bytes; a RunStatus takes 1.6 KB before its phases, and the
// memory a listing of 10,000 runs touches was most of its time.
type ListEntry struct {
	RunID string
	Seq   uint64 // the run's latest checkpoint
	// Summary is the run's summary; nil when Whole is set.
	Summary *listing.Summary
	// Whole is the run read whole, with its status set as List sets it;
	// nil when Summary is set.
	Whole *RunStatus
	// Status, Stopped and LastError are RunStatus's.
	Status    string
	Stopped   bool
	LastError string
	// Record is the store's record the summary was read from, which a
	// listing crosses the socket as (listing.Row); nil when Whole is set.
	Record *checkpoint.RunInfo
}

// CreatedAt is when the entry's run was created.
func (e *ListEntry) CreatedAt() time.Time {
	if e.Summary != nil {
		return e.Summary.CreatedAt
	}
	return e.Whole.Snapshot.State.Run.CreatedAt
}

// List is every run of the store, newest first, each as its summary
// where it has one: what list prints, at a fraction of the memory of the
// runs' states.
func (h *Host) List(ctx context.Context, _ ListRequest) ([]ListEntry, error) {
	return h.entries(ctx, true)
}

// entries is List, with the entries' Status, Stopped and LastError set
// only when status is true. Without status, an entry's Summary is its
// head alone (listing.ReadHead): choosing a run needs its creation,
// status and stash, none of the strings and lists a listing prints.
func (h *Host) entries(ctx context.Context, status bool) ([]ListEntry, error) {
	infos, err := h.store.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	es := make([]ListEntry, len(infos))
	sums := make([]listing.Summary, len(infos))
	var sl listing.Slabs
	for i := range infos {
		in := &infos[i]
		e := &es[i]
		e.RunID, e.Seq = in.RunID, in.Latest
		if !status {
			if listing.ReadHead(*in, &sums[i]) {
				e.Summary, e.Record = &sums[i], in
				continue
			}
		} else if listing.ReadShared(*in, &sums[i], &sl) { // infos are the listing's own (Store.Runs)
			e.Summary, e.Record = &sums[i], in
			e.Status = sums[i].Status.String()
			e.Stopped = sums[i].Status == state.RunRunning && !h.live.driving(in.RunID)
			if e.Stopped {
				e.LastError = h.lastError(ctx, in.RunID, in.Latest)
			}
			continue
		}
		snap, err := h.runner.State(ctx, in.RunID)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", in.RunID, err)
		}
		rs := &RunStatus{Snapshot: snap}
		if status {
			h.setStatus(ctx, rs)
		}
		e.Whole, e.Status, e.Stopped, e.LastError = rs, rs.Status, rs.Stopped, rs.LastError
	}
	sortEntries(es)
	return es, nil
}

// TotalUsage is the usage of every role of e's run, added up as
// state.TotalOf adds it up.
func (e *ListEntry) TotalUsage() state.Usage {
	if e.Summary != nil {
		return e.Summary.TotalUsage()
	}
	return e.Whole.Snapshot.State.TotalUsage()
}

// view is the status a person is told of e's run (ViewStatus), and
// whether its user's changes are still to be put back.
func (e *ListEntry) view() (st state.RunStatus, stashed bool) {
	if e.Summary != nil {
		return e.Summary.Status, e.Summary.Stash != ""
	}
	return ViewStatus(e.Whole.Snapshot), e.Whole.Snapshot.State.Stash.Pending()
}

// sortEntries orders es newest first, as runs orders a listing: by
// creation, then by run id, both descending.
func sortEntries(es []ListEntry) {
	slices.SortStableFunc(es, func(a, b ListEntry) int {
		if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	})
}

// EntriesOf is rs as a listing's entries, each whole (a holder of an
// older gaffer answers a listing with the runs' statuses).
func EntriesOf(rs []RunStatus) []ListEntry {
	es := make([]ListEntry, len(rs))
	for i := range rs {
		r := &rs[i]
		es[i] = ListEntry{RunID: r.Snapshot.RunID, Seq: r.Snapshot.Seq, Whole: r, Status: r.Status, Stopped: r.Stopped, LastError: r.LastError}
	}
	return es
}

// StatusesOf is es as the runs' statuses (ListEntry.RunStatus), the
// snapshots' lists cut from a few slabs rather than made one by one.
func StatusesOf(es []ListEntry) []RunStatus {
	rs := make([]RunStatus, len(es))
	var sl listing.Slabs
	for i := range es {
		es[i].runStatusTo(&rs[i], &sl)
	}
	return rs
}

// RunStatus is the RunStatus List has for e's run: the run read whole, or
// the snapshot its summary stands for (see listing.FromRecord).
func (e *ListEntry) RunStatus() RunStatus {
	var rs RunStatus
	e.runStatusTo(&rs, nil)
	return rs
}

// runStatusTo is RunStatus into *rs, the snapshot's lists cut from sl's.
func (e *ListEntry) runStatusTo(rs *RunStatus, sl *listing.Slabs) {
	if e.Whole != nil {
		*rs = *e.Whole
		return
	}
	*rs = RunStatus{Status: e.Status, Stopped: e.Stopped, LastError: e.LastError}
	listing.SnapshotOf(*e.Record, e.Summary, &rs.Snapshot, sl)
}

// ListedEntry is snap as List has it: through the summary its checkpoint
// carries, its status as List sets it for a run a process is driving. ok
// is false for a snapshot that List reads whole: a run waiting on an
// interrupt.
func ListedEntry(snap graph.Snapshot[state.ExecutionState]) (e ListEntry, ok bool, err error) {
	sum, err := listing.Summarize(snap)
	if err != nil || snap.Interrupt != nil {
		return ListEntry{}, false, err
	}
	info := &checkpoint.RunInfo{RunID: snap.RunID, Latest: snap.Seq, Status: snap.Status, Time: snap.Time, Summary: sum}
	e = ListEntry{RunID: snap.RunID, Seq: snap.Seq, Summary: new(listing.Summary), Record: info}
	if !listing.Read(*info, e.Summary, nil) {
		return ListEntry{}, false, nil
	}
	e.Status = e.Summary.Status.String()
	return e, true, nil
}
