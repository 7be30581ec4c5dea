package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// replayDriver answers each Run with the next report and records the sessions.
type replayDriver struct {
	reports  []Report
	sessions []Session
}

func (d *replayDriver) Run(_ context.Context, s Session) (Report, error) {
	d.sessions = append(d.sessions, s)
	if len(d.sessions) > len(d.reports) {
		return Report{}, errors.New("replay: no more reports")
	}
	return d.reports[len(d.sessions)-1], nil
}

func TestRunStructuredRetriesOnce(t *testing.T) {
	d := &replayDriver{reports: []Report{
		{Status: StatusCompleted, Output: "I approve!", SessionID: "s1", Usage: state.Usage{InputTokens: 10, CostUSD: 0.5}, FilesChanged: []string{"a"}},
		{Status: StatusCompleted, Output: `{"approved": true, "comments": "ok"}`, SessionID: "s1", Usage: state.Usage{InputTokens: 5, CostUSD: 0.25}, FilesChanged: []string{"b", "a"}},
	}}
	rv, rep, err := RunStructured(context.Background(), d, Session{Role: RoleReviewer, Prompt: "review"}, ParseReview)
	if err != nil || !rv.Approved || rv.Comments != "ok" {
		t.Fatalf("got %+v, %v", rv, err)
	}
	if len(d.sessions) != 2 || d.sessions[1].SessionID != "s1" || !strings.Contains(d.sessions[1].Prompt, "no JSON object") {
		t.Errorf("the retry did not continue the session with the parse error: %+v", d.sessions)
	}
	if rep.Usage != (state.Usage{InputTokens: 15, CostUSD: 0.75}) || !slices.Equal(rep.FilesChanged, []string{"a", "b"}) || rep.Status != StatusCompleted {
		t.Errorf("report %+v", rep)
	}
}

func TestRunStructuredFailsAfterTwoBadOutputs(t *testing.T) {
	d := &replayDriver{reports: []Report{
		{Status: StatusCompleted, Output: "nope", SessionID: "s1"},
		{Status: StatusCompleted, Output: `{"items": [{"id": 1}]}`, SessionID: "s1"},
	}}
	_, rep, err := RunStructured(context.Background(), d, Session{Role: RoleEvaluator}, ParseEvaluation)
	if !errors.Is(err, ErrBadOutput) || !errors.Is(err, ErrInvalidResult) {
		t.Fatalf("error %v, want ErrBadOutput wrapping ErrInvalidResult", err)
	}
	if rep.Status != StatusFailed || rep.Error != err.Error() || len(d.sessions) != 2 {
		t.Errorf("report %+v after %d runs", rep, len(d.sessions))
	}
}

func TestRunStructuredPassesFailures(t *testing.T) {
	d := &replayDriver{reports: []Report{{Status: StatusFailed, Error: "turn limit"}}}
	_, rep, err := RunStructured(context.Background(), d, Session{Role: RoleReviewer}, ParseReview)
	if err != nil || rep.Status != StatusFailed || len(d.sessions) != 1 {
		t.Errorf("a failed session: %v, %+v, %d runs", err, rep, len(d.sessions))
	}
	d = &replayDriver{}
	if _, _, err := RunStructured(context.Background(), d, Session{Role: RoleReviewer}, ParseReview); err == nil {
		t.Errorf("a driver error was swallowed")
	}
}
