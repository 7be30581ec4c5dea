package pool

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/internal/otlprecv"
	"github.com/gaffer-dev/gaffer/telemetry"
)

// lockedBuffer is a bytes.Buffer for a logger that workers write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPoolLinksTheRunToItsSubmitter: three runs submitted through the
// control socket to a pool whose host traces to a real OTLP receiver.
// The one submitted with a submitter's span carries its traceparent on
// the queued job and, parked for approval and answered, ends with a root
// span linked to the submitter's; the one submitted without telemetry
// carries none and links nothing; the one whose traceparent is malformed
// completes, links nothing, and the pool's log warns of it.
func TestPoolLinksTheRunToItsSubmitter(t *testing.T) {
	t.Parallel()
	recv, err := otlprecv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	env := func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return recv.Endpoint()
		}
		return ""
	}
	f := hosttest.New(t)
	h := f.Open(t, host.Config{})
	tr, err := telemetry.Start(t.Context(), telemetry.Config{}, telemetry.Options{Dir: t.TempDir(), Getenv: env})
	if err != nil || tr == nil {
		t.Fatalf("telemetry.Start = %v, %v", tr, err)
	}
	h.OnClose(h.Subscribe(tr.Observe))
	h.OnTraceLink(tr.Link)
	var logs lockedBuffer
	p := newTestPoolOf(t, h, Config{Workers: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if _, _, err := socket.Listen(t.Context(), h, p, control.Info{Kind: "serve"}); err != nil {
		t.Fatal(err)
	}
	svc := socket.NewClient(f.Store)
	ctx := t.Context()

	sender, err := telemetry.Start(ctx, telemetry.Config{}, telemetry.Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	linked := f.Spec("r-linked")
	sub := sender.Submit(ctx, linked.RunID, nil)
	linked.TraceParent, linked.TraceState = sub.TraceParent, sub.TraceState
	_, err = svc.Submit(ctx, linked)
	sub.End(err)
	if err != nil {
		t.Fatal(err)
	}
	if err := sender.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	plain := f.Spec("r-plain")
	plain.AutoApprove = true
	bad := f.Spec("r-bad")
	bad.AutoApprove, bad.TraceParent = true, "00-not-a-trace-context"
	for _, spec := range []host.RunSpec{plain, bad} {
		if _, err := svc.Submit(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"r-linked": sub.TraceParent, "r-plain": "", "r-bad": bad.TraceParent}
	queued := p.Queue().Status().Queued
	if len(queued) != 3 {
		t.Fatalf("%d jobs queued, want 3", len(queued))
	}
	for _, j := range queued {
		if j.TraceParent != want[j.RunID] {
			t.Errorf("job %s carries traceparent %q, want %q", j.RunID, j.TraceParent, want[j.RunID])
		}
	}

	startPool(t, p)
	waitStatus(t, p, svc, "r-linked", "awaiting_approval")
	if _, err := svc.Answer(ctx, host.AnswerRequest{RunID: "r-linked", Verdict: host.Approve}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r-linked", "r-plain", "r-bad"} {
		waitStatus(t, p, svc, id, "completed")
	}
	if err := tr.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	var submit otlprecv.Span
	roots := map[string]otlprecv.Span{}
	for _, s := range recv.Spans() {
		switch s.Name {
		case "gaffer submit":
			submit = s
		case "gaffer run":
			roots[s.Attrs["gaffer.run_id"].(string)] = s
		}
	}
	if submit.SpanID == "" || !strings.Contains(sub.TraceParent, submit.SpanID) {
		t.Fatalf("the submit span %+v was not received or is not the job's %s", submit, sub.TraceParent)
	}
	r := roots["r-linked"]
	if r.TraceID != telemetry.TraceID("r-linked").String() || len(r.Links) != 1 || r.Links[0].TraceID != submit.TraceID || r.Links[0].SpanID != submit.SpanID {
		t.Errorf("r-linked's root: trace %s links %+v; want the run's trace, linked to the submit span %s/%s", r.TraceID, r.Links, submit.TraceID, submit.SpanID)
	}
	for _, id := range []string{"r-plain", "r-bad"} {
		if r, ok := roots[id]; !ok || len(r.Links) != 0 {
			t.Errorf("%s's root (received %v) links %+v, want none", id, ok, r.Links)
		}
	}
	if l := logs.String(); !strings.Contains(l, "trace context is ignored") || !strings.Contains(l, "run=r-bad") || !strings.Contains(l, "00-not-a-trace-context") {
		t.Errorf("the pool's log does not warn of r-bad's traceparent:\n%s", l)
	}
}
