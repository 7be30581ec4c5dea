package recovery

import (
	"slices"
	"strings"
	"testing"
)

// checkReasons fails t unless got holds exactly len(want) reasons and
// each of want is mentioned by one of them.
func checkReasons(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("reasons = %q, want %d matching %q", got, len(want), want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, w) }) {
			t.Errorf("no reason mentions %q: %q", w, got)
		}
	}
}
