package cli

import (
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/telemetry"
	"github.com/gaffer-dev/gaffer/workspace"
)

// telemetryOf returns the telemetry block of the configuration of the
// repository at repo (gaffer.yaml, or the user's file), or nil when it
// and the environment (getenv) leave telemetry off. A configuration that does not
// load leaves it off too: the run's preflight reports the file.
func telemetryOf(repo string, getenv func(string) string) *telemetry.Config {
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
