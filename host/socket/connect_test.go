package socket

import (
	"context"
	"errors"
	"testing"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
)

// Connect reaches the process that holds the store when it answers on
// its socket, and opens the store here otherwise; a missing store is the
// caller's refusal, and nothing is opened for it.
func TestConnectChoosesTheService(t *testing.T) {
	f := hosttest.New(t)
	opened := 0
	open := func(ctx context.Context) (host.Service, func(), error) {
		opened++
		h, err := f.NewHost(host.Config{})
		if err != nil {
			return nil, nil, err
		}
		return h, func() { _ = h.Close() }, nil
	}
	var got host.Service
	keep := func(svc host.Service) error {
		got = svc
		_, err := svc.List(t.Context(), host.ListRequest{})
		return err
	}

	// Nobody holds the store: it is opened here.
	if err := Connect(t.Context(), Connection{Dir: f.Store, Open: open}, keep); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*host.Host); !ok || opened != 1 {
		t.Fatalf("without a holder: %T, opened %d times; want a *Host opened once", got, opened)
	}

	// A holder answers: the call goes to it, nothing is opened.
	h := f.Open(t, host.Config{})
	if _, _, err := Listen(t.Context(), h, h, control.Info{Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := Connect(t.Context(), Connection{Dir: f.Store, Open: open}, keep); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*Client); !ok || opened != 1 {
		t.Fatalf("with a holder: %T, opened %d times; want the *Client", got, opened)
	}
	h.Close()

	// A store that is missing: the caller's refusal, nothing opened.
	missing := errors.New("no runs here")
	err := Connect(t.Context(), Connection{Dir: f.Store, Open: open, Missing: func() error { return missing }}, keep)
	if !errors.Is(err, missing) || opened != 1 {
		t.Fatalf("missing store: %v, opened %d times", err, opened)
	}
}
