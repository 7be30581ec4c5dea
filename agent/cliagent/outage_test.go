package cliagent

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/agent/cliagent/codex"
)

// TestOutage tells a provider's outage from the agent's own failure, on
// the texts the real CLIs print (Codex 0.171.0, Claude Code 2.1.330).
func TestOutage(t *testing.T) {
	cases := []struct {
		name string
		run  clikit.Run
		res  clikit.Result
		want bool
	}{
		{"claude 500", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, APIStatus: 500, ErrText: "API Error: 500 internal. This is a server-side issue"}, true},
		{"claude 529", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, APIStatus: 529, ErrText: "API Error: 529 overloaded"}, true},
		{"claude 429", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, APIStatus: 429, ErrText: "API Error: 429 rate limited"}, true},
		{"claude refused", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, APIError: "connection_failed", ErrText: "API Error: Connection refused (ECONNREFUSED)"}, true},
		{"claude 400", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, APIStatus: 400, ErrText: "API Error: 400 credit balance too low"}, false},
		{"claude 401", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, APIStatus: 401, ErrText: "API Error: 401 invalid x-api-key"}, false},
		{"claude older, no status field", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, ErrText: "API Error: 503 Service Unavailable"}, true},
		{"claude's own words", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, ErrText: "the tests fail: connection refused on port 8080"}, false},
		{"claude max turns", clikit.Run{ExitCode: 1}, clikit.Result{Parsed: true, IsError: true, ErrText: "Reached maximum number of turns (2)"}, false},
		{"codex 500", clikit.Run{ExitCode: 1}, clikit.Result{IsError: true, ErrText: "We’re currently experiencing high demand, which may cause temporary errors."}, true},
		{"codex 429", clikit.Run{ExitCode: 1}, clikit.Result{IsError: true, ErrText: "exceeded retry limit, last status: 429 Too Many Requests"}, true},
		{"codex 529", clikit.Run{ExitCode: 1}, clikit.Result{IsError: true, ErrText: "unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:43529/v1/responses"}, true},
		{"codex 503", clikit.Run{ExitCode: 1}, clikit.Result{IsError: true, ErrText: "unexpected status 503 Service Unavailable: down, url: http://127.0.0.1:1/v1/responses"}, true},
		{"codex unreachable", clikit.Run{ExitCode: 1}, clikit.Result{IsError: true, ErrText: "Reconnecting... waiting for network (Connection failed: error sending request)"}, true},
		{"codex 400", clikit.Run{ExitCode: 1}, clikit.Result{IsError: true, ErrText: `{"error":{"message":"bad request","type":"invalid_request_error"}}`}, false},
		{"stderr only", clikit.Run{ExitCode: 1, Stderr: "warning\nError: connect ECONNREFUSED 127.0.0.1:443"}, clikit.Result{}, true},
		{"tests failed", clikit.Run{ExitCode: 1, Stderr: "FAIL example.com/greet"}, clikit.Result{IsError: true, ErrText: "tests fail"}, false},
		{"timed out reconnecting", clikit.Run{ExitCode: -1, TimedOut: true}, clikit.Result{IsError: true, ErrText: "Reconnecting... waiting for network (Connection failed: error sending request)"}, true},
		{"timed out in a command", clikit.Run{ExitCode: -1, TimedOut: true, Busy: "Bash", Stderr: "running go test"}, clikit.Result{}, false},
		{"timed out in a command, provider away", clikit.Run{ExitCode: -1, TimedOut: true, Busy: "Bash"}, clikit.Result{IsError: true, ErrText: "stream disconnected before completion"}, true},
		{"timed out waiting for the model", clikit.Run{ExitCode: -1, TimedOut: true, Stderr: "thinking"}, clikit.Result{}, true},
	}
	for _, c := range cases {
		var v clikit.Vendor = codex.New()
		if strings.HasPrefix(c.name, "claude") {
			v = claude.New()
		}
		if got := v.Outage(c.run, c.res); (got != "") != c.want {
			t.Errorf("%s: %s's outage = %q, want outage %v", c.name, v.Name(), got, c.want)
		}
	}
}
