package telemetry

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracer turns the events of a host's runs into spans and exports them.
// Pass Observe to graph.Runner.Subscribe; Shutdown flushes.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	obs      *observer
}

// BatchTimeout is how long an ended span waits to be exported with
// others: what a SIGKILL can lose of the spans already ended (the spans
// it cuts are recovered from the journal on resume).
const BatchTimeout = 500 * time.Millisecond

// Options are what Start needs besides the configuration.
type Options struct {
	// Dir is where the spans still open are journaled (one file per
	// run), beside the store: a resume after a crash reads it.
	Dir string
	// Getenv reads the environment (os.Getenv in production).
	Getenv func(string) string
	// Exporter, when set, replaces the OTLP/HTTP exporter (tests,
	// benchmarks).
	Exporter sdktrace.SpanExporter
}

// Start returns the Tracer of cfg, or nil (and no exporter, provider or
// goroutine) when cfg.On is false.
func Start(ctx context.Context, cfg Config, o Options) (*Tracer, error) {
	if !cfg.On(o.Getenv) {
		return nil, nil
	}
	exp := o.Exporter
	if exp == nil {
		// The endpoint as the SDK reads it, but through Getenv; the SDK
		// reads the other OTEL_EXPORTER_OTLP_* variables (headers …).
		u := tracesURL(cfg.Endpoint)
		if e := o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
			u = tracesURL(e)
		}
		if e := o.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
			u = e
		}
		var err error
		if exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u)); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	name := cfg.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// over the block.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", name)), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	// The sampler is the SDK's default, which OTEL_TRACES_SAMPLER sets.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(BatchTimeout)), sdktrace.WithResource(res), sdktrace.WithIDGenerator(idGenerator{}))
	t := &Tracer{provider: tp, tracer: tp.Tracer("github.com/gaffer-dev/gaffer/telemetry")}
	t.obs = newObserver(t.tracer, o.Dir, cfg.Content)
	return t, nil
}

// Shutdown flushes the spans ended so far and stops the exporter. Spans
// still open (a run waiting for approval) stay in the journal for the
// process that resumes the run.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// ForceFlush exports the spans ended so far.
func (t *Tracer) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}
