package socket

import (
	"context"
	"errors"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
)

// Connection is how a front end reaches the run service of a store: the
// process holding it when one answers on its socket, else the database's
// serves, else the store opened in the front end's own process.
type Connection struct {
	// Dir is the store's local directory: the holder's socket is beside it.
	Dir string
	// Read is a call that only reads: a store held by a process that does
	// not answer (yet, or any more) is waited for, up to HeldWait.
	Read     bool
	HeldWait time.Duration
	// Missing, when set, reports a store there is nothing to open for
	// (no store yet): its error is the caller's words for it.
	Missing func() error
	// Database, when set, reaches the service through a database store
	// (its serves, on any host): a nil host.Service without an error when the
	// store is not a database.
	Database func(ctx context.Context) (host.Service, func(), error)
	// Open opens the store in this process.
	Open func(ctx context.Context) (host.Service, func(), error)
}

// Connect calls f with the run service of c's store, chosen as Connection
// says; a caller does not know which one it has. A holder that goes away
// during f (the store is free, or about to be) is not an error: the
// choice is made again.
func Connect(ctx context.Context, c Connection, f func(host.Service) error) error {
	deadline := time.Now().Add(c.HeldWait)
	for {
		cl, err := holderAt(ctx, c.Dir)
		if err != nil {
			return err
		}
		if cl != nil {
			err := f(cl)
			if !errors.Is(err, control.ErrNoServer) && (!c.Read || !errors.Is(err, ErrUnreachable)) {
				return err
			}
		}
		if c.Missing != nil {
			if err := c.Missing(); err != nil {
				return err
			}
		}
		if c.Database != nil {
			svc, closeSvc, err := c.Database(ctx)
			if err != nil {
				return err
			}
			if svc != nil {
				defer closeSvc()
				return f(svc)
			}
		}
		svc, closeSvc, err := c.Open(ctx)
		if err != nil {
			if !c.Read || host.CodeOf(err) != host.Held || time.Now().After(deadline) {
				return err
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		defer closeSvc()
		return f(svc)
	}
}

// HolderAt returns the client of the process holding the store whose local
// directory is dir when one answers on its socket, nil when none does. A
// socket of another user, or in a directory others can write, is host.Refused.
func HolderAt(ctx context.Context, dir string) (*Client, error) { return holderAt(ctx, dir) }

func holderAt(ctx context.Context, dir string) (*Client, error) {
	cl := NewClient(dir)
	if _, err := cl.Ping(ctx); err != nil {
		if errors.Is(err, control.ErrStranger) || errors.Is(err, control.ErrUnsafeDir) {
			return nil, &host.Error{Code: host.Refused, Err: err}
		}
		return nil, nil
	}
	return cl, nil
}
