package socket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/listing"
	"github.com/gaffer-dev/gaffer/state"
)

// ProtocolVersion is the version of the Service on the control socket.
// Each operation is registered as "v<version>.<name>"; a process speaking
// another version answers with control.ErrUnknownOp, which the Client
// reports as ErrProtocolVersion.
const ProtocolVersion = 1

// The operations of the Service on the socket, one per method.
const (
	opStart   = "start"
	opResume  = "resume"
	opAnswer  = "answer"
	opCancel  = "cancel"
	opStatus  = "status"
	opState   = "state"
	opEntries = "entries" // List, as one binary record
	opHistory = "history"
	opFork    = "fork"
	opSubmit  = "submit"
	opDelete  = "delete"
	// The operations on runs' git refs, after v1's first ones: an older
	// holder answers them with control.ErrUnknownOp.
	opDeleteRuns = "delete_runs"
	opPrune      = "prune"
	opMerge      = "merge"
	opDiff       = "diff"
)

// The listing operations of older gaffers, answered for their clients
// and asked of their holders: List as the runs' statuses (list), then as
// a JSON list of runs, each as its summary where it has one (runs).
const (
	opList = "list"
	opRuns = "runs"
)

// ErrUnreachable is a call no process answered: nobody holds the store
// (it also matches control.ErrNoServer then), or the holder went away
// before it answered.
var ErrUnreachable = errors.New("host: the process holding the store did not answer")

// ErrProtocolVersion is a process on the socket that does not speak this
// binary's ProtocolVersion (another gaffer version).
var ErrProtocolVersion = errors.New("host: the process holding the store speaks another protocol version")

func opName(op string) string { return fmt.Sprintf("v%d.%s", ProtocolVersion, op) }

// wireError is a refusal on the wire: its Code and message.
// codeClosing is the wire code of a call the holder cut off as it
// closed; the Client turns it into ErrUnreachable (a reader tries the
// store itself).
const codeClosing host.Code = "closing"

type wireError struct {
	Code    host.Code `json:"code"`
	Message string    `json:"message"`
}

// reply is every operation's response: its typed result, or a refusal.
type reply[T any] struct {
	Result T          `json:"result"`
	Error  *wireError `json:"error,omitempty"`
}

// handle registers op on mux: decode Req, call fn, encode its result
// and its refusal, if any, in a reply.
func handle[Req, Res any](mux *control.Mux, op string, fn func(context.Context, Req) (Res, error)) {
	mux.Handle(opName(op), func(ctx context.Context, args json.RawMessage) (any, error) {
		var req Req
		if len(args) > 0 {
			if err := json.Unmarshal(args, &req); err != nil {
				return reply[Res]{Error: &wireError{Code: host.Usage, Message: fmt.Sprintf("%s: %v", op, err)}}, nil
			}
		}
		res, err := fn(ctx, req)
		if err != nil && ctx.Err() != nil {
			// Cut off because the holder is closing: the caller is told so,
			// as if nobody had answered, not given the cut's error.
			return reply[Res]{Error: &wireError{Code: codeClosing, Message: err.Error()}}, nil
		}
		if err != nil {
			// What the operation returned beside its refusal goes too (a
			// diff's header naming the commits git could not diff).
			return reply[Res]{Result: res, Error: &wireError{Code: host.CodeOf(err), Message: err.Error()}}, nil
		}
		return reply[Res]{Result: res}, nil
	})
}

// Register serves svc's operations on mux, each once (control.Mux panics
// on a second registration).
func Register(mux *control.Mux, svc host.Service) {
	handle(mux, opStart, svc.Start)
	handle(mux, opResume, svc.Resume)
	handle(mux, opAnswer, svc.Answer)
	handle(mux, opCancel, svc.Cancel)
	handle(mux, opStatus, svc.Status)
	handle(mux, opState, svc.State)
	handle(mux, opEntries, func(ctx context.Context, req host.ListRequest) (entriesAnswer, error) {
		es, err := svc.List(ctx, req)
		if err != nil {
			return entriesAnswer{}, err
		}
		b, err := packEntries(es)
		return entriesAnswer{Blob: b}, err
	})
	handle(mux, opRuns, func(ctx context.Context, req host.ListRequest) ([]listedRun, error) {
		es, err := svc.List(ctx, req)
		if err != nil {
			return nil, err
		}
		out := make([]listedRun, len(es))
		for i := range es {
			out[i] = listedOf(&es[i])
		}
		return out, nil
	})
	handle(mux, opList, func(ctx context.Context, req host.ListRequest) ([]host.RunStatus, error) {
		es, err := svc.List(ctx, req)
		return host.StatusesOf(es), err
	})
	handle(mux, opHistory, svc.History)
	handle(mux, opFork, svc.Fork)
	handle(mux, opSubmit, svc.Submit)
	handle(mux, opDelete, func(ctx context.Context, req host.RunRequest) (struct{}, error) {
		return struct{}{}, svc.Delete(ctx, req)
	})
	handle(mux, opDeleteRuns, svc.DeleteRuns)
	handle(mux, opPrune, svc.Prune)
	handle(mux, opMerge, svc.Merge)
	handle(mux, opDiff, svc.Diff)
}

// Client is the Service of the process that holds a store, over its
// control socket. When no process answers, its calls return an error
// matching control.ErrNoServer: the caller opens the store itself.
type Client struct {
	cl *control.Client
}

// NewClient returns the Client of the store directory store.
func NewClient(store string) *Client { return &Client{cl: control.NewClient(store)} }

// Path is the socket's path.
func (c *Client) Path() string { return c.cl.Path }

// Ping asks who holds the store.
func (c *Client) Ping(ctx context.Context) (control.Info, error) { return c.cl.Ping(ctx) }

// call sends op with req and decodes its reply into res.
func call[Res any](ctx context.Context, c *Client, op string, req any) (Res, error) {
	var r reply[Res]
	err := c.cl.Call(ctx, opName(op), req, &r)
	if errors.Is(err, control.ErrUnknownOp) {
		return r.Result, &host.Error{Code: host.Held, Err: fmt.Errorf("%w (version %d): %w", ErrProtocolVersion, ProtocolVersion, err)}
	}
	if errors.Is(err, control.ErrStranger) || errors.Is(err, control.ErrUnsafeDir) {
		return r.Result, &host.Error{Code: host.Refused, Err: err}
	}
	var re *control.RemoteError
	if err != nil && !errors.As(err, &re) {
		// Nobody answered, or the holder went away mid-call.
		return r.Result, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if err != nil {
		return r.Result, err
	}
	if r.Error != nil && r.Error.Code == codeClosing {
		return r.Result, fmt.Errorf("%w: it closed during the call (%s)", ErrUnreachable, r.Error.Message)
	}
	if r.Error != nil {
		return r.Result, &host.Error{Code: r.Error.Code, Err: errors.New(r.Error.Message)}
	}
	return r.Result, nil
}

// Start asks the holder to start a run (serve queues it).
func (c *Client) Start(ctx context.Context, spec host.RunSpec) (host.Outcome, error) {
	return call[host.Outcome](ctx, c, opStart, spec)
}

// Resume asks the holder to continue a run.
func (c *Client) Resume(ctx context.Context, req host.RunRequest) (host.Outcome, error) {
	return call[host.Outcome](ctx, c, opResume, req)
}

// Answer gives the holder a human's answer.
func (c *Client) Answer(ctx context.Context, req host.AnswerRequest) (host.Outcome, error) {
	if err := req.Check(); err != nil { // the wire has no words for no answer
		return host.Outcome{}, err
	}
	return call[host.Outcome](ctx, c, opAnswer, req)
}

// Cancel asks the holder to cancel a run.
func (c *Client) Cancel(ctx context.Context, req host.RunRequest) (host.Outcome, error) {
	return call[host.Outcome](ctx, c, opCancel, req)
}

// Status asks the holder for a run's status.
func (c *Client) Status(ctx context.Context, req host.RunRequest) (host.RunStatus, error) {
	return call[host.RunStatus](ctx, c, opStatus, req)
}

// State asks the holder for a run's latest checkpoint.
func (c *Client) State(ctx context.Context, req host.RunRequest) (graph.Snapshot[state.ExecutionState], error) {
	return call[graph.Snapshot[state.ExecutionState]](ctx, c, opState, req)
}

// List asks the holder for every run of the store, as Host.List: a run
// listed through its summary crosses the socket as that summary. A holder
// of an earlier gaffer is asked as it was: for the runs as a JSON list,
// or for their statuses.
func (c *Client) List(ctx context.Context, req host.ListRequest) ([]host.ListEntry, error) {
	lr, err := c.listed(ctx, req)
	if errors.Is(err, ErrProtocolVersion) {
		rs, err := call[[]host.RunStatus](ctx, c, opList, req)
		return host.EntriesOf(rs), err
	}
	if err != nil {
		return nil, err
	}
	es := make([]host.ListEntry, len(lr))
	sums := make([]listing.Summary, len(lr))
	var sl listing.Slabs
	for i, r := range lr {
		e := &es[i]
		if r.Info != nil && listing.Read(*r.Info, &sums[i], &sl) {
			*e = host.ListEntry{RunID: r.Info.RunID, Seq: r.Info.Latest, Summary: &sums[i], Status: r.Status, Stopped: r.Stopped,
				LastError: r.LastError, Record: r.Info}
			continue
		}
		rs, err := c.unlisted(ctx, r)
		if err != nil {
			return nil, err
		}
		*e = host.EntriesOf([]host.RunStatus{rs})[0]
	}
	return es, nil
}

// listed asks the holder for its entries as one record (an older holder,
// as a list of runs), ErrProtocolVersion from a holder that has neither.
func (c *Client) listed(ctx context.Context, req host.ListRequest) ([]listedRun, error) {
	a, err := call[entriesAnswer](ctx, c, opEntries, req)
	if errors.Is(err, ErrProtocolVersion) {
		return call[[]listedRun](ctx, c, opRuns, req)
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

// listedRun is one run of a runs answer. A run List read through its
// summary travels as that summary (about 200 bytes, where its RunStatus
// is 1–2 KB of JSON: 10,000 runs were 17 MB); the others whole.
type listedRun struct {
	Info      *checkpoint.RunInfo `json:"info,omitempty"`
	Status    string              `json:"status,omitempty"`
	Stopped   bool                `json:"stopped,omitempty"`
	LastError string              `json:"last_error,omitempty"`
	Whole     *host.RunStatus     `json:"whole,omitempty"`
}

func listedOf(e *host.ListEntry) listedRun {
	if e.Record == nil {
		return listedRun{Whole: e.Whole}
	}
	return listedRun{Info: e.Record, Status: e.Status, Stopped: e.Stopped, LastError: e.LastError}
}

// unlisted is the RunStatus r stands for: a summary this binary cannot
// read (a holder of another gaffer) is asked for the run's status.
func (c *Client) unlisted(ctx context.Context, r listedRun) (host.RunStatus, error) {
	switch {
	case r.Whole != nil:
		return *r.Whole, nil
	case r.Info == nil:
		return host.RunStatus{}, fmt.Errorf("%w: a listed run without its record", ErrUnreachable)
	}
	snap, ok := listing.FromRecord(*r.Info)
	if !ok {
		return c.Status(ctx, host.RunRequest{RunID: r.Info.RunID})
	}
	return host.RunStatus{Snapshot: snap, Status: r.Status, Stopped: r.Stopped, LastError: r.LastError}, nil
}

// History asks the holder for a run's checkpoints.
func (c *Client) History(ctx context.Context, req host.RunRequest) ([]host.Checkpoint, error) {
	return call[[]host.Checkpoint](ctx, c, opHistory, req)
}

// Fork asks the holder to fork a run.
func (c *Client) Fork(ctx context.Context, req host.ForkRequest) (host.Forked, error) {
	return call[host.Forked](ctx, c, opFork, req)
}

// Submit asks the holder (serve) to queue a run.
func (c *Client) Submit(ctx context.Context, spec host.RunSpec) (host.Outcome, error) {
	return call[host.Outcome](ctx, c, opSubmit, spec)
}

// Delete asks the holder to delete a run.
func (c *Client) Delete(ctx context.Context, req host.RunRequest) error {
	_, err := call[struct{}](ctx, c, opDelete, req)
	return err
}

// DeleteRuns asks the holder to delete finished runs with their refs.
func (c *Client) DeleteRuns(ctx context.Context, req host.DeleteRequest) (host.Deleted, error) {
	return call[host.Deleted](ctx, c, opDeleteRuns, req)
}

// Prune asks the holder what a prune takes, or to remove what no run owns.
func (c *Client) Prune(ctx context.Context, req host.PruneRequest) (host.Pruned, error) {
	return call[host.Pruned](ctx, c, opPrune, req)
}

// Merge asks the holder to merge a run's branch.
func (c *Client) Merge(ctx context.Context, req host.MergeRequest) (host.Merged, error) {
	req.Repo = absDir(req.Repo)
	return call[host.Merged](ctx, c, opMerge, req)
}

// Diff asks the holder for a run's change.
func (c *Client) Diff(ctx context.Context, req host.DiffRequest) (host.RunDiff, error) {
	req.Repo = absDir(req.Repo)
	return call[host.RunDiff](ctx, c, opDiff, req)
}

// absDir is dir made absolute in this process: the holder resolves a
// relative path in its own working directory, which need not be ours
// (`gaffer --repo . merge` beside a serve started elsewhere). "" stays "".
func absDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// Listen serves svc on the control socket of h's store until ctx ends;
// info tells other processes the holding command's kind ("run", "serve")
// and the program's version. Without an error, the socket is closed when
// the returned function is called (h's Close calls it too).
func Listen(ctx context.Context, h *host.Host, svc host.Service, info control.Info) (stop func(), path string, err error) {
	mux := control.NewMux()
	Register(mux, svc)
	info.Store = h.StoreDir()
	srv, err := control.Listen(control.Config{Path: control.SocketPath(h.StoreDir()), Mux: mux, Info: info})
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx) }()
	stop = func() { cancel(); <-done }
	h.OnClose(stop)
	return stop, srv.Path(), nil
}
