package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/state"
)

// ListEntry is one run of a listing of many runs (Entries): the run's
// summary when the store keeps one for its latest checkpoint, the run
// read whole otherwise (one waiting on a person, one of a plan too long
// for a summary, one an older gaffer wrote). A summary and its entry take
// about 600 bytes; a RunStatus takes 1.6 KB before its phases, and the
// memory a listing of 10,000 runs touches was most of its time.
type ListEntry struct {
	RunID string
	Seq   uint64 // the run's latest checkpoint
	// Summary is the run's summary; nil when Whole is set.
	Summary *RunSummary
	// Whole is the run read whole, with its status set as List sets it;
	// nil when Summary is set.
	Whole *RunStatus
	// Status, Stopped and LastError are RunStatus's.
	Status    string
	Stopped   bool
	LastError string

	// info is the store's record the summary came from: the socket
	// carries it (see listedRun).
	info *checkpoint.RunInfo
}

// CreatedAt is when the entry's run was created.
func (e *ListEntry) CreatedAt() time.Time {
	if e.Summary != nil {
		return e.Summary.CreatedAt
	}
	return e.Whole.Snapshot.State.Run.CreatedAt
}

// Entries is every run of the store, newest first, as List orders them,
// each as its summary where it has one: what list prints, at a fraction
// of List's memory.
func (h *Host) Entries(ctx context.Context) ([]ListEntry, error) { return h.entries(ctx, true) }

// entries is Entries, with the entries' Status, Stopped and LastError set
// only when status is true (choosing a run needs none of them).
func (h *Host) entries(ctx context.Context, status bool) ([]ListEntry, error) {
	infos, err := h.store.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	es := make([]ListEntry, len(infos))
	sums := make([]RunSummary, len(infos))
	var sl slabs
	for i := range infos {
		in := &infos[i]
		e := &es[i]
		e.RunID, e.Seq = in.RunID, in.Latest
		if summaryOf(*in, &sums[i], &sl) {
			e.Summary, e.info = &sums[i], in
			if !status {
				continue
			}
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

// EntriesOf is rs as a listing's entries, each whole: for a Service that
// has no Entries of its own.
func EntriesOf(rs []RunStatus) []ListEntry {
	es := make([]ListEntry, len(rs))
	for i := range rs {
		r := &rs[i]
		es[i] = ListEntry{RunID: r.Snapshot.RunID, Seq: r.Snapshot.Seq, Whole: r, Status: r.Status, Stopped: r.Stopped, LastError: r.LastError,
			info: r.listed}
	}
	return es
}

// Entries is the Host's.
func (p *Pool) Entries(ctx context.Context) ([]ListEntry, error) { return p.h.Entries(ctx) }

func (x holder) Entries(ctx context.Context) ([]ListEntry, error) { return x.h.Entries(ctx) }

// Entries asks the holder for every run of the store, as Host.Entries: a
// run listed through its summary crosses the socket as that summary.
func (c *Client) Entries(ctx context.Context) ([]ListEntry, error) {
	lr, err := c.listed(ctx)
	if errors.Is(err, ErrProtocolVersion) {
		rs, err := call[[]RunStatus](ctx, c, opList, listRequest{})
		return EntriesOf(rs), err
	}
	if err != nil {
		return nil, err
	}
	es := make([]ListEntry, len(lr))
	sums := make([]RunSummary, len(lr))
	var sl slabs
	for i, r := range lr {
		e := &es[i]
		if r.Info != nil && summaryOf(*r.Info, &sums[i], &sl) {
			*e = ListEntry{RunID: r.Info.RunID, Seq: r.Info.Latest, Summary: &sums[i], Status: r.Status, Stopped: r.Stopped,
				LastError: r.LastError, info: r.Info}
			continue
		}
		rs, err := c.unlisted(ctx, r)
		if err != nil {
			return nil, err
		}
		*e = EntriesOf([]RunStatus{rs})[0]
	}
	return es, nil
}

// listed asks the holder for its entries as one record (an older holder,
// as a list of runs), ErrProtocolVersion from a holder that has neither.
func (c *Client) listed(ctx context.Context) ([]listedRun, error) {
	a, err := call[entriesAnswer](ctx, c, opEntries, listRequest{})
	if errors.Is(err, ErrProtocolVersion) {
		return call[[]listedRun](ctx, c, opRuns, listRequest{})
	}
	if err != nil {
		return nil, err
	}
	lr, err := unpackEntries(a.Blob)
	if err != nil {
		return nil, fmt.Errorf("the entries of the process holding the store: %w", err)
	}
	return lr, nil
}

// entryLister is a Service that lists its runs as entries.
type entryLister interface {
	Entries(ctx context.Context) ([]ListEntry, error)
}

// Entries is svc's entries: its own when it has them, its List's
// otherwise.
func Entries(ctx context.Context, svc Service) ([]ListEntry, error) {
	if el, ok := svc.(entryLister); ok {
		return el.Entries(ctx)
	}
	rs, err := svc.List(ctx)
	return EntriesOf(rs), err
}

// RunStatus is the RunStatus List has for e's run: the run read whole, or
// the snapshot its summary stands for (see fromSummary).
func (e *ListEntry) RunStatus() RunStatus {
	var rs RunStatus
	e.runStatusTo(&rs, nil)
	return rs
}

// runStatusTo is RunStatus into *rs, the snapshot's lists cut from sl's.
func (e *ListEntry) runStatusTo(rs *RunStatus, sl *slabs) {
	if e.Whole != nil {
		*rs = *e.Whole
		return
	}
	*rs = RunStatus{Status: e.Status, Stopped: e.Stopped, LastError: e.LastError, listed: e.info}
	snapshotOf(*e.info, e.Summary, &rs.Snapshot, sl)
}
