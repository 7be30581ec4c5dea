// Package telemetry sends every run's events to an OpenTelemetry tracing
// backend as spans (OTLP over HTTP): a run is one trace whose id derives
// from the run id, so a resumed run, in this process or another, continues
// it. Tracer subscribes to a host's runner (graph.Runner.Subscribe) and
// turns the events it sees into spans with their real start and end times:
// the run (root), plan, validation, the approval wait, each phase and
// within it each development attempt and review, each agent session (with
// the GenAI semantic conventions' usage attributes) and under it each of
// its model calls and tool calls, the git work (a lane's work tree, a
// commit, the lanes' combine) and recovery. Spans
// still open are journaled beside the store, so that a resume after a
// crash ends the spans the crash cut (gaffer.cut=true, status Error) and
// reopens the run and phase spans with their first start. A run queued
// in serve is linked to its submitter: Submit is the front end's span,
// whose W3C trace context travels with the job, and Link gives the run's
// root span a link to it (a link, so that the trace id stays the run
// id's). It is off
// unless configured (gaffer.yaml's telemetry block or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT): then Start returns nil and nothing is
// created.
package telemetry
