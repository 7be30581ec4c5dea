// Package otlprecv is an OTLP/HTTP trace receiver for tests: an HTTP
// server on 127.0.0.1 that decodes what exporters send to /v1/traces
// (binary protobuf, gzip or not, as otlptracehttp sends it) with the
// published OTLP protobufs (go.opentelemetry.io/proto/otlp) and keeps the
// spans, flattened with their resource's and scope's attributes.
package otlprecv
