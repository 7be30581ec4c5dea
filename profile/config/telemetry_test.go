package config

import (
	"errors"
	"strings"
	"testing"
)

func TestTelemetryBlock(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte("telemetry:\n  endpoint: http://127.0.0.1:4318\n  service_name: ci\n  content: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	tc := c.Telemetry()
	if tc.Endpoint != "http://127.0.0.1:4318" || tc.ServiceName != "ci" || !tc.Content || !tc.On(func(string) string { return "" }) {
		t.Errorf("Telemetry() = %+v", tc)
	}
	none, err := Parse("gaffer.yaml", []byte("max_runs_per_repo: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if none.Telemetry().On(func(string) string { return "" }) {
		t.Error("no block and no environment: telemetry is on")
	}
	for in, want := range map[string]string{
		"telemetry:\n  endpoint: 127.0.0.1:4318\n": "gaffer.yaml:2: telemetry.endpoint: must be an http or https URL",
		"telemetry:\n  endpiont: http://x\n":       `unknown key "endpiont"`,
	} {
		_, err := Parse("gaffer.yaml", []byte(in))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}
