package host

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		code Code
		ok   bool
	}{
		{fmt.Errorf("x: %w", state.ErrInvalidConfig), Invalid, true},
		{&state.PlanError{File: "p", Problems: []state.Problem{{Msg: "m"}}}, Invalid, true},
		{fmt.Errorf("resume: %w", &checkpoint.LeaseHeldError{RunID: "r"}), Held, true},
		{fmt.Errorf("open: %w", workspace.ErrNotRepo), Refused, true},
		{fmt.Errorf("developer: %w", agent.ErrMissingKey), Refused, true},
		{fmt.Errorf("run r: %w", &checkpoint.CorruptError{RunID: "r", What: "checkpoint", Err: errors.New("bad")}), Refused, true},
		{checkpoint.ErrForeignStore, Refused, true},
		{errors.New("boom"), "", false},
		{nil, "", false},
	} {
		if code, ok := Classify(c.err); code != c.code || ok != c.ok {
			t.Errorf("Classify(%v) = %q, %v; want %q, %v", c.err, code, ok, c.code, c.ok)
		}
	}
	// An *Error's own code is CodeOf's: Classify reads only the cause.
	if code := CodeOf(fmt.Errorf("x: %w", workspace.ErrNotRepo)); code != Failure {
		t.Errorf("CodeOf(ErrNotRepo) = %q, want Failure: the socket sends codes as they are", code)
	}
}
