package host

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/nodes"
)

// The verdict crosses the socket and the journal in the v1 format: what
// an older client sends, and what an older serve journaled (a
// nodes.Answer, before decisions were kept), reads as the same verdict;
// and what this one writes, an older one reads as it always did.
func TestVerdictReadsAndWritesTheV1Format(t *testing.T) {
	for _, c := range []struct {
		wire string
		want AnswerRequest
	}{
		// gaffer approve / reject of v1, over the socket.
		{`{"run_id":"r-1","approved":true,"feedback":"ok"}`, AnswerRequest{RunID: "r-1", Verdict: Approve, Feedback: "ok"}},
		{`{"run_id":"r-1","approved":false,"feedback":"smaller"}`, AnswerRequest{RunID: "r-1", Verdict: Reject, Feedback: "smaller"}},
		// gaffer approve --decision of v1 sent approved: true; the inbox's stop false.
		{`{"run_id":"r-1","approved":true,"decision":"retry","feedback":"use big.Int"}`, AnswerRequest{RunID: "r-1", Verdict: Retry, Feedback: "use big.Int"}},
		{`{"run_id":"r-1","approved":true,"decision":"stop"}`, AnswerRequest{RunID: "r-1", Verdict: Stop}},
		{`{"run_id":"r-1","approved":false,"decision":"stop"}`, AnswerRequest{RunID: "r-1", Verdict: Stop}},
		// A journal's answer of a serve before verdicts: a nodes.Answer.
		{`{"approved":true}`, AnswerRequest{Verdict: Approve}},
		{`{"approved":false,"feedback":"no"}`, AnswerRequest{Verdict: Reject, Feedback: "no"}},
		// gaffer approve --decision skip (a question with the Doctor's skip_phase).
		{`{"run_id":"r-1","approved":true,"decision":"skip"}`, AnswerRequest{RunID: "r-1", Verdict: Skip}},
	} {
		var got AnswerRequest
		if err := json.Unmarshal([]byte(c.wire), &got); err != nil || got != c.want {
			t.Errorf("%s: read %+v, %v; want %+v", c.wire, got, err, c.want)
		}
	}
	var bad AnswerRequest
	if err := json.Unmarshal([]byte(`{"approved":true,"decision":"maybe"}`), &bad); err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Errorf("an unknown decision: %v, want it refused by name", err)
	}

	// What this version writes, read as v1 read it.
	for v, want := range map[Verdict]answerWire{
		Approve: {RunID: "r-1", Approved: true},
		Reject:  {RunID: "r-1"},
		Retry:   {RunID: "r-1", Approved: true, Decision: "retry"},
		Stop:    {RunID: "r-1", Approved: true, Decision: "stop"},
		Skip:    {RunID: "r-1", Approved: true, Decision: "skip"},
	} {
		b, err := json.Marshal(AnswerRequest{RunID: "r-1", Verdict: v})
		if err != nil {
			t.Fatal(err)
		}
		var got answerWire
		if err := json.Unmarshal(b, &got); err != nil || got != want {
			t.Errorf("%s writes %s, want %+v", v, b, want)
		}
		if p, err := ParseVerdict(v.String()); err != nil || p != v {
			t.Errorf("ParseVerdict(%q) = %v, %v", v.String(), p, err)
		}
	}
	if _, err := ParseVerdict("maybe"); err == nil {
		t.Error("ParseVerdict(maybe) succeeded")
	}
}

// Skip answers only a recovery question that offers it (the Doctor's
// skip_phase); its resume value is an approved skip, and retry and stop
// keep theirs.
func TestSkipAnswersOnlyASkipQuestion(t *testing.T) {
	offer, _ := json.Marshal(nodes.Question{Kind: nodes.QuestionKind, Phase: 2, Decision: "skip_phase"})
	other, _ := json.Marshal(nodes.Question{Kind: nodes.QuestionKind, Phase: 2, Decision: "needs_human"})
	if err := NotSkipping("r-1", Skip, offer); err != nil {
		t.Fatalf("skip to a skip_phase question: %v", err)
	}
	err := NotSkipping("r-1", Skip, other)
	var he *Error
	if !errors.As(err, &he) || he.Code != Usage || !strings.Contains(err.Error(), "run r-1's question does not offer skip") {
		t.Fatalf("skip to a needs_human question: %v", err)
	}
	if err := NotSkipping("r-1", Retry, other); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if a := (AnswerRequest{Verdict: Skip, Feedback: "f"}).Answer(); !a.Skip || !a.Approved || a.Feedback != "f" {
		t.Fatalf("skip's answer %+v", a)
	}
	if a := (AnswerRequest{Verdict: Retry}).Answer(); a.Skip || !a.Approved {
		t.Fatalf("retry's answer %+v", a)
	}
	if !Skip.Decides() || AnswerVerb(AnswerRequest{Verdict: Skip}.Answer()) != "skipped its phase" {
		t.Fatal("skip does not decide recovery's question")
	}
}
