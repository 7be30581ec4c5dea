package script

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
)

// TestScriptLanes: the lanes of one phase pick their entries by task,
// have session ids of their own, and a reviewer may name the tasks at
// fault.
func TestScriptLanes(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`developer:
  - phase: 1
    summary: any lane
  - phase: 1
    task: 1b
    summary: lane of 1b
reviewer:
  - phase: 1
    approved: false
    comments: 1b is wrong
    tasks: [1b]
`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDriver(s, Options{})
	for _, c := range []struct {
		tasks  []string
		lane   int
		want   string
		wantID string
	}{
		{[]string{"1a"}, 1, "any lane", "script-r1-p1-l1-a1"},
		{[]string{"1b", "1c"}, 2, "lane of 1b", "script-r1-p1-l2-a1"},
		{[]string{"1a", "1b"}, 0, "lane of 1b", "script-r1-p1-a1"}, // one lane for the phase
	} {
		sess := dev(1, 1, 1, t.TempDir())
		sess.Tasks, sess.Lane = c.tasks, c.lane
		rep, _, err := runSession(t, d, sess)
		if err != nil || rep.Summary != c.want || rep.SessionID != c.wantID {
			t.Errorf("tasks %v: summary %q, id %q (%v); want %q, %q", c.tasks, rep.Summary, rep.SessionID, err, c.want, c.wantID)
		}
	}
	rep, _, err := runSession(t, d, agent.Session{Role: agent.RoleReviewer, Phase: 1, Attempt: 1, Iteration: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := agent.ParseReview(rep.Output)
	if err != nil || r.Approved || !slices.Equal(r.Tasks, []string{"1b"}) {
		t.Errorf("review = %+v, %v", r, err)
	}
	if _, err := Parse("s.yaml", []byte("developer:\n  - task: 1\n  - task: 1\n")); err == nil || !strings.Contains(err.Error(), "task 1") {
		t.Errorf("two entries for one task: %v", err)
	}
}

// TestScriptWait: a wait action pauses the session as a model would, and
// ends early when the session is cancelled.
func TestScriptWait(t *testing.T) {
	s, err := Parse("s.yaml", []byte("developer:\n  - actions:\n      - wait: 300ms\n      - write: {path: done.txt, content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDriver(s, Options{})
	start := time.Now()
	rep, _, err := runSession(t, d, dev(1, 1, 1, t.TempDir()))
	if err != nil || rep.Status != agent.StatusCompleted || !slices.Equal(rep.FilesChanged, []string{"done.txt"}) {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("the session took %v, less than its wait", waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	long, _ := Parse("s.yaml", []byte("developer:\n  - actions:\n      - wait: 1h\n"))
	if _, err := NewDriver(long, Options{}).Run(ctx, dev(1, 1, 1, t.TempDir())); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a cancelled wait: %v", err)
	}
	for _, bad := range []string{"wait: -1s", "wait: soon"} {
		if _, err := Parse("s.yaml", []byte("developer:\n  - actions:\n      - "+bad+"\n")); err == nil {
			t.Errorf("%q loads", bad)
		}
	}
}
