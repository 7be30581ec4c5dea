package graphtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/graph/graphtest"
)

type state struct {
	Items []string
	Tags  map[string]bool
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Helper()                           {}

func TestCheckPure(t *testing.T) {
	spare := make([]string, 1, 4)
	spare[0] = "a"
	calls := 0 // every call of the spare-capacity node writes a different value, as a node reading a clock would
	for _, tc := range []struct {
		name string
		node func(context.Context, state) (state, error)
		in   state
		want string // substring of the failure, "" for none
	}{
		{"pure", func(_ context.Context, s state) (state, error) {
			s.Items = append(append([]string(nil), s.Items...), "b")
			return s, nil
		}, state{Items: []string{"a"}}, ""},
		{"writes the map", func(_ context.Context, s state) (state, error) {
			s.Tags["x"] = true
			return s, nil
		}, state{Tags: map[string]bool{}}, "mutated its input"},
		{"writes a slice element", func(_ context.Context, s state) (state, error) {
			s.Items[0] = "z"
			return s, nil
		}, state{Items: []string{"a"}}, "mutated its input"},
		{"appends into spare capacity", func(_ context.Context, s state) (state, error) {
			calls++
			s.Items = append(s.Items, strings.Repeat("b", calls))
			return s, nil
		}, state{Items: spare}, "shares memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			graphtest.CheckPure(rec, tc.node, tc.in)
			got := strings.Join(rec.errs, "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("failures = %q, want %q", got, tc.want)
			}
		})
	}
}
