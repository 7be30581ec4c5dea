package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/internal/otlprecv"
)

// TestSubmittedRunLinksBothWays: a submitter's span (under the caller's
// TRACEPARENT) and the run it queued link to each other, and the run's
// root keeps the link when another process (a new tracer on the same
// journal) resumes the parked run and ends it; the run's trace stays the
// one its run id gives. (The OTLP exporter does not send a link's trace
// state, so the receiver cannot check it.)
func TestSubmittedRunLinksBothWays(t *testing.T) {
	t.Parallel()
	recv := receiver(t)
	dir := t.TempDir()
	start := func() *Tracer { return startTo(t, recv, Config{}, dir) }
	const id = "r-20260101-link01"
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"

	sender := start()
	sub := sender.Submit(context.Background(), id, envOf("TRACEPARENT", "00-"+callerTrace+"-"+callerSpan+"-01", "TRACESTATE", "vendor=x"))
	if !strings.HasPrefix(sub.TraceParent, "00-"+callerTrace+"-") || sub.TraceState != "vendor=x" {
		t.Fatalf("submission's trace context = %q %q, want in the caller's trace with its state", sub.TraceParent, sub.TraceState)
	}
	sub.End(nil)
	if err := sender.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	a := &feed{tr: start(), id: id, at: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	if err := a.tr.Link(id, sub.TraceParent, sub.TraceState); err != nil {
		t.Fatal(err)
	}
	a.ev(graph.Event{Kind: graph.RunStarted, Payload: "run"})
	a.node("architect")
	a.parkAtApproval()
	if err := a.tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := &feed{tr: start(), id: id, at: a.at.Add(time.Minute)} // no Link: an answer's job carries none
	b.ev(graph.Event{Kind: graph.RunStarted, Payload: "resume"})
	b.node("approval")
	b.ev(graph.Event{Kind: graph.RunFinished, Payload: graph.Done})
	if err := b.tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	var submit, root *otlprecv.Span
	for _, s := range recv.Spans() {
		switch s.Name {
		case "gaffer submit":
			submit = &s
		case "gaffer run":
			root = &s
		}
	}
	if submit == nil || root == nil {
		t.Fatalf("got submit %v, root %v; want both", submit, root)
	}
	if submit.TraceID != callerTrace || submit.ParentID != callerSpan || submit.Attrs["gaffer.run_id"] != id {
		t.Errorf("submit span: trace %s parent %s attrs %v; want under the caller's span, naming the run", submit.TraceID, submit.ParentID, submit.Attrs)
	}
	if len(submit.Links) != 1 || submit.Links[0].TraceID != TraceID(id).String() || submit.Links[0].SpanID != RootSpanID(id).String() {
		t.Errorf("submit span's links = %+v, want the run's root", submit.Links)
	}
	if root.TraceID != TraceID(id).String() || root.ParentID != "" {
		t.Errorf("run root in trace %s under %q, want the run's own trace, a root", root.TraceID, root.ParentID)
	}
	if len(root.Links) != 1 || root.Links[0].TraceID != submit.TraceID || root.Links[0].SpanID != submit.SpanID ||
		root.Links[0].Attrs["gaffer.link"] != "submitter" {
		t.Errorf("run root's links = %+v, want the submit span %s/%s", root.Links, submit.TraceID, submit.SpanID)
	}
}

// TestMalformedTraceParentLinksNothing: a job's traceparent that is not
// W3C trace context is an error of Link, and the run traces as if it had
// none; a tracer that is off gives no trace context to submit.
func TestMalformedTraceParentLinksNothing(t *testing.T) {
	t.Parallel()
	recv := receiver(t)
	tr := startTo(t, recv, Config{}, t.TempDir())
	const id = "r-20260101-link02"
	for _, bad := range []string{"00-zz", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "garbage"} {
		if err := tr.Link(id, bad, ""); err == nil || !strings.Contains(err.Error(), "traceparent") {
			t.Errorf("Link(%q) = %v, want an error naming the traceparent", bad, err)
		}
	}
	f := &feed{tr: tr, id: id, at: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	f.ev(graph.Event{Kind: graph.RunStarted, Payload: "run"})
	f.node("architect")
	f.ev(graph.Event{Kind: graph.RunFinished, Payload: graph.Done})
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	roots := 0
	for _, s := range recv.Spans() {
		if s.Name == "gaffer run" {
			roots++
			if len(s.Links) != 0 {
				t.Errorf("run root links %+v after a malformed traceparent", s.Links)
			}
		}
	}
	if roots != 1 {
		t.Errorf("got %d run roots, want 1", roots)
	}

	var off *Tracer
	if sub := off.Submit(context.Background(), id, envOf("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")); sub.TraceParent != "" || sub.TraceState != "" {
		t.Errorf("an off tracer's submission carries %q %q", sub.TraceParent, sub.TraceState)
	}
	if err := off.Link(id, "garbage", ""); err != nil {
		t.Errorf("an off tracer's Link = %v, want nothing done", err)
	}
}
