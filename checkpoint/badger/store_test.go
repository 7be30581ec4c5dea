package badger_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/checkpoint/checkpointtest"
)

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Store {
		s, err := badger.Open(t.TempDir(), badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestRunsOfManyRuns: Runs of more runs than its first chunks hold (ids
// of several lengths, some runs without a summary) lists each once, its
// own summary with it, newest activity first.
func TestRunsOfManyRuns(t *testing.T) {
	ctx := context.Background()
	s, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 300
	var want []string // newest activity first
	for i := range n {
		id := fmt.Sprintf("r-%d", i*7919%1000) // not in key order
		if i%5 == 0 {
			id += strings.Repeat("x", 140) // a longer length prefix
		}
		cp := checkpoint.Checkpoint{RunID: id, Seq: 1, Time: time.Unix(int64(i), 0)}
		if i%3 != 0 {
			cp.Summary = []byte("summary of " + id)
		}
		if err := s.Put(ctx, cp, checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append([]string{id}, want...)
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		t.Fatalf("%d runs, want %d", len(runs), n)
	}
	for i, r := range runs {
		if r.RunID != want[i] {
			t.Fatalf("run %d is %s, want %s (newest activity first)", i, r.RunID, want[i])
		}
		k := n - 1 - i
		if wantSum := "summary of " + r.RunID; k%3 != 0 && string(r.Summary) != wantSum {
			t.Errorf("run %s: summary %q, want %q", r.RunID, r.Summary, wantSum)
		} else if k%3 == 0 && r.Summary != nil {
			t.Errorf("run %s: summary %q, want none", r.RunID, r.Summary)
		}
	}
}
