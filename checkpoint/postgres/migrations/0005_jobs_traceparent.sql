-- The W3C trace context (traceparent, tracestate) of the span that submitted
-- a job, when the submitter traces (package telemetry): the host that
-- executes the run, or takes it over, links the run's trace to it. Empty
-- when the submitter's telemetry was off, and in every row queued before
-- this migration: such a job runs as before, unlinked.
ALTER TABLE jobs ADD COLUMN traceparent text NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN tracestate text NOT NULL DEFAULT '';
