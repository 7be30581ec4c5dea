package host

import (
	"context"
	"errors"
	"testing"
)

// Connect reaches the process that holds the store when it answers on
// its socket, and opens the store here otherwise; a missing store is the
// caller's refusal, and nothing is opened for it.
func TestConnectChoosesTheService(t *testing.T) {
	f := newFixture(t)
	opened := 0
	open := func(ctx context.Context) (Service, func(), error) {
		opened++
		h, err := f.newHost(Config{})
		if err != nil {
			return nil, nil, err
		}
		return h, func() { _ = h.Close() }, nil
	}
	var got Service
	keep := func(svc Service) error { got = svc; _, err := svc.List(t.Context(), ListRequest{}); return err }

	// Nobody holds the store: it is opened here.
	if err := Connect(t.Context(), Connection{Dir: f.store, Open: open}, keep); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*Host); !ok || opened != 1 {
		t.Fatalf("without a holder: %T, opened %d times; want a *Host opened once", got, opened)
	}

	// A holder answers: the call goes to it, nothing is opened.
	h := f.open(t)
	if _, _, err := h.Listen(t.Context(), "test", h); err != nil {
		t.Fatal(err)
	}
	if err := Connect(t.Context(), Connection{Dir: f.store, Open: open}, keep); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*Client); !ok || opened != 1 {
		t.Fatalf("with a holder: %T, opened %d times; want the *Client", got, opened)
	}
	h.Close()

	// A store that is missing: the caller's refusal, nothing opened.
	missing := errors.New("no runs here")
	err := Connect(t.Context(), Connection{Dir: f.store, Open: open, Missing: func() error { return missing }}, keep)
	if !errors.Is(err, missing) || opened != 1 {
		t.Fatalf("missing store: %v, opened %d times", err, opened)
	}
}
