package telemetry

import (
	"strings"
)

// Config is the telemetry block of gaffer.yaml with the environment's
// say. The standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS …)
// are read by the OpenTelemetry SDK itself and win over the block.
type Config struct {
	// Endpoint is the OTLP/HTTP base URL (http://127.0.0.1:4318), to
	// which /v1/traces is added as for OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string `yaml:"endpoint,omitempty"`
	// ServiceName is the service.name of the spans, "gaffer" by default.
	ServiceName string `yaml:"service_name,omitempty"`
	// Content puts each model call's prompt and completion on its chat
	// span, as the GenAI semantic conventions' gen_ai.input.messages and
	// gen_ai.output.messages attributes (JSON), redacted as transcripts
	// are and bounded (8 KiB a part). Off by default: prompts carry the
	// plan and the code.
	Content bool `yaml:"content,omitempty"`
	// Enabled, when set false, turns telemetry off whatever the
	// environment says.
	Enabled *bool `yaml:"enabled,omitempty"`
}

// DefaultServiceName is the service.name when neither the block nor
// OTEL_SERVICE_NAME names one.
const DefaultServiceName = "gaffer"

// On reports whether c, in the environment getenv reads, asks for traces:
// an endpoint in the block or in OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and neither enabled: false,
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
func (c Config) On(getenv func(string) string) bool {
	if c.Enabled != nil && !*c.Enabled {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return c.Endpoint != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// tracesURL is the traces URL of a base endpoint, as the SDK makes it of
// OTEL_EXPORTER_OTLP_ENDPOINT.
func tracesURL(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1/traces") {
		return base
	}
	return base + "/v1/traces"
}
