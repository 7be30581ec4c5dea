package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// A run submitted to serve is linked to its submitter's span, not made its
// child: the run's trace id stays the one its run id gives (TraceID), which
// every process that resumes the run, on any host, finds without asking the
// submitter. The submitter's span (Submit) links to the run's root span,
// and the run's root span (Link) to the submitter's: a tracing backend
// follows the link either way.

// linkKind is the gaffer.link attribute of the links between a run and its
// submitter.
const keyLink = "gaffer.link"

// propagator reads and writes W3C trace context (traceparent, tracestate).
var propagator = propagation.TraceContext{}

// ParseTraceParent returns the span context of a W3C traceparent and
// tracestate, or an error naming what is wrong.
func ParseTraceParent(traceparent, tracestate string) (trace.SpanContext, error) {
	carrier := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		carrier["tracestate"] = tracestate
	}
	sc := trace.SpanContextFromContext(propagator.Extract(context.Background(), carrier))
	if !sc.IsValid() {
		return sc, fmt.Errorf("telemetry: traceparent %q is not W3C trace context (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)", traceparent)
	}
	return sc, nil
}

// formatTraceParent returns the W3C traceparent and tracestate of sc.
func formatTraceParent(sc trace.SpanContext) (traceparent, tracestate string) {
	carrier := propagation.MapCarrier{}
	propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier["traceparent"], carrier["tracestate"]
}

// Link tells t that run runID was submitted by the span of traceparent
// and tracestate (a serve job's), before the run starts or resumes in
// this process: the run's root span carries a link to it, kept in the
// journal beside the store so that a resume in a later process keeps it
// too. A malformed traceparent is an error and links nothing; the run is
// not concerned.
func (t *Tracer) Link(runID, traceparent, tracestate string) error {
	if t == nil || traceparent == "" {
		return nil
	}
	sc, err := ParseTraceParent(traceparent, tracestate)
	if err != nil {
		return err
	}
	t.obs.mu.Lock()
	defer t.obs.mu.Unlock()
	t.obs.links[runID] = sc
	return nil
}

// Submission is a front end's span of handing run RunID to serve.
type Submission struct {
	// TraceParent and TraceState are the span's W3C trace context, for
	// the job (host.RunSpec).
	TraceParent, TraceState string
	span                    trace.Span
}

// Submit starts the span "gaffer submit" of a front end that queues run
// runID in serve, under ctx's span, else the span of the TRACEPARENT
// (and TRACESTATE) environment variables as getenv reads them (a nil
// getenv reads none), else as a trace of its own; it links to the run's
// root span. End it once the job is queued. Nil t gives a Submission
// without trace context.
func (t *Tracer) Submit(ctx context.Context, runID string, getenv func(string) string) *Submission {
	if t == nil {
		return &Submission{}
	}
	parent := ctx
	if !trace.SpanContextFromContext(ctx).IsValid() && getenv != nil {
		if tp := getenv("TRACEPARENT"); tp != "" {
			if sc, err := ParseTraceParent(tp, getenv("TRACESTATE")); err == nil {
				parent = trace.ContextWithRemoteSpanContext(ctx, sc)
			}
		}
	}
	run := trace.NewSpanContext(trace.SpanContextConfig{TraceID: TraceID(runID), SpanID: RootSpanID(runID), TraceFlags: trace.FlagsSampled})
	_, s := t.tracer.Start(parent, "gaffer submit", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String(keyRunID, runID)),
		trace.WithLinks(trace.Link{SpanContext: run, Attributes: []attribute.KeyValue{attribute.String(keyLink, "run")}}))
	sub := &Submission{span: s}
	if s.SpanContext().IsValid() {
		sub.TraceParent, sub.TraceState = formatTraceParent(s.SpanContext())
	}
	return sub
}

// End ends the submission's span, with an error status when err is not
// nil.
func (s *Submission) End(err error) {
	if s == nil || s.span == nil {
		return
	}
	if err != nil {
		s.span.SetStatus(codes.Error, firstLine(err.Error()))
	}
	s.span.End()
}
