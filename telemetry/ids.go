package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// TraceID returns the trace id of run runID: the first 16 bytes of the
// SHA-256 of "gaffer-run:"+runID, the same in every process, so that a
// resumed run continues its trace.
func TraceID(runID string) trace.TraceID {
	sum := sha256.Sum256([]byte("gaffer-run:" + runID))
	var t trace.TraceID
	copy(t[:], sum[:16])
	return t
}

// RootSpanID returns the span id of run runID's root span.
func RootSpanID(runID string) trace.SpanID {
	sum := sha256.Sum256([]byte("gaffer-root:" + runID))
	var s trace.SpanID
	copy(s[:], sum[:8])
	return s
}

// wantIDs is a context value: the ids the next span started with the
// context takes (a run's trace, a span reopened after a resume).
type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

type wantKey struct{}

// withIDs returns ctx asking the next span for span id s (random when
// invalid) in trace t (when it has no parent).
func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, wantKey{}, wantIDs{trace: t, span: s})
}

// idGenerator gives spans the ids their context asks for (withIDs), and
// random ones otherwise.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	w, _ := ctx.Value(wantKey{}).(wantIDs)
	t := w.trace
	if !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t, spanID(w.span)
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	w, _ := ctx.Value(wantKey{}).(wantIDs)
	return spanID(w.span)
}

// spanID returns s when valid, a random span id otherwise.
func spanID(s trace.SpanID) trace.SpanID {
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}
