package profile

import (
	"context"
	"time"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/telemetry"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Telemetry returns the telemetry block of the configuration of the
// repository at repo (gaffer.yaml, or the user's file), or nil when it
// and the environment (getenv) leave telemetry off. A configuration that
// does not load leaves it off too: the run's preflight reports the file.
func Telemetry(repo string, getenv func(string) string) *telemetry.Config {
	r, err := workspace.Open(repo)
	if err != nil {
		return nil
	}
	cfg, err := config.Load(r.Root(), getenv)
	if err != nil {
		return nil
	}
	tc := cfg.Telemetry()
	if !tc.On(getenv) {
		return nil
	}
	return &tc
}

// SubmitSpan starts the span of a front end that queues spec's run in
// serve, when telemetry is on for the repository at repo in getenv's
// environment: spec gets a run id when it has none (the span names it)
// and the span's trace context, which the job carries to the worker that
// links the run's trace to it.
// The returned end ends the span and sends it, waiting at most
// submitFlush. Off, spec is left as it is and nothing is created.
func SubmitSpan(ctx context.Context, repo string, spec *host.RunSpec, getenv func(string) string) (end func(error)) {
	tc := Telemetry(repo, getenv)
	if tc == nil {
		return func(error) {}
	}
	t, err := telemetry.Start(ctx, *tc, telemetry.Options{Getenv: getenv})
	if err != nil || t == nil {
		return func(error) {}
	}
	if spec.RunID == "" {
		spec.RunID = host.NewRunID(time.Now())
	}
	sub := t.Submit(ctx, spec.RunID, getenv)
	spec.TraceParent, spec.TraceState = sub.TraceParent, sub.TraceState
	return func(err error) {
		sub.End(err)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), submitFlush)
		defer cancel()
		_ = t.Shutdown(ctx) // a span lost costs the trace, not the run
	}
}

// submitFlush bounds how long a front end waits to send its submit span.
const submitFlush = 5 * time.Second
