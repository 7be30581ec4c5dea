package cli

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

func TestWriteWatchTree(t *testing.T) {
	v := WatchView{
		RunID: "r-1", Status: "running", Goal: "models", Checkpoint: 9, CurrentPhase: 2, ReviewIteration: 2,
		Usage: state.Usage{InputTokens: 1200, OutputTokens: 300, CachedTokens: 100, CostUSD: 0.0125},
		Phases: []WatchPhase{
			{Number: 1, Status: "completed", Attempt: 1, DurationSeconds: 12, Commit: "abc1234", Tasks: []WatchTask{
				{ID: "1a", Title: "User model tests", Type: "test", Status: "completed"},
				{ID: "1b", Title: "Post model tests", Type: "test", Status: "completed"},
			}},
			{Number: 2, Status: "running", Attempt: 2, DurationSeconds: 65, ReviewIteration: 2, Tasks: []WatchTask{
				{ID: "2a", Title: "User model", Type: "impl", Status: "completed"},
				{ID: "2b", Title: "Post model", Type: "impl", Status: "running"},
			}},
			{Number: 3, Status: "pending", Tasks: []WatchTask{{ID: "3", Title: "API tests", Type: "test", Status: "pending"}}},
		},
	}
	var b strings.Builder
	writeWatchTree(&b, v)
	want := `models  [r-1, running]  checkpoint 9
tokens: 1200 in, 300 out, 100 cached  cost: $0.0125

Phase 1 (test): ✓ Completed (12s, abc1234)
  ├── ✓ [test] 1a User model tests
  └── ✓ [test] 1b Post model tests
Phase 2 (impl): ● Running (1m5s, attempt 2, review 2)
  ├── ✓ [impl] 2a User model
  └── ● [impl] 2b Post model
Phase 3 (test): ○ Pending
  └── ○ [test] 3 API tests
`
	if got := b.String(); got != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", got, want)
	}
}

func TestPhaseKind(t *testing.T) {
	for _, c := range []struct {
		types []string
		want  string
	}{
		{[]string{"test", "test"}, " (test)"},
		{[]string{"test", "impl"}, " (test+impl)"},
		{[]string{"impl", "test", "impl"}, " (impl+test)"},
		{[]string{"", ""}, ""},
		{[]string{"impl", ""}, " (impl)"},
	} {
		var ts []WatchTask
		for _, ty := range c.types {
			ts = append(ts, WatchTask{Type: ty})
		}
		if got := runview.Kind(ts); got != c.want {
			t.Errorf("runview.Kind(%v) = %q, want %q", c.types, got, c.want)
		}
	}
}
