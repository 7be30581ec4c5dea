package cliagent

import "testing"

// TestOutage tells a provider's outage from the agent's own failure, on
// the texts the real CLIs print (Codex 0.171.0, Claude Code 2.1.330).
func TestOutage(t *testing.T) {
	cases := []struct {
		name string
		run  cliRun
		res  cliResult
		want bool
	}{
		{"claude 500", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, apiStatus: 500, errText: "API Error: 500 internal. This is a server-side issue"}, true},
		{"claude 529", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, apiStatus: 529, errText: "API Error: 529 overloaded"}, true},
		{"claude 429", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, apiStatus: 429, errText: "API Error: 429 rate limited"}, true},
		{"claude refused", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, apiError: "connection_failed", errText: "API Error: Connection refused (ECONNREFUSED)"}, true},
		{"claude 400", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, apiStatus: 400, errText: "API Error: 400 credit balance too low"}, false},
		{"claude 401", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, apiStatus: 401, errText: "API Error: 401 invalid x-api-key"}, false},
		{"claude older, no status field", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, errText: "API Error: 503 Service Unavailable"}, true},
		{"claude's own words", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, errText: "the tests fail: connection refused on port 8080"}, false},
		{"claude max turns", cliRun{exitCode: 1}, cliResult{claude: true, isError: true, errText: "Reached maximum number of turns (2)"}, false},
		{"codex 500", cliRun{exitCode: 1}, cliResult{isError: true, errText: "We’re currently experiencing high demand, which may cause temporary errors."}, true},
		{"codex 429", cliRun{exitCode: 1}, cliResult{isError: true, errText: "exceeded retry limit, last status: 429 Too Many Requests"}, true},
		{"codex 529", cliRun{exitCode: 1}, cliResult{isError: true, errText: "unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:43529/v1/responses"}, true},
		{"codex 503", cliRun{exitCode: 1}, cliResult{isError: true, errText: "unexpected status 503 Service Unavailable: down, url: http://127.0.0.1:1/v1/responses"}, true},
		{"codex unreachable", cliRun{exitCode: 1}, cliResult{isError: true, errText: "Reconnecting... waiting for network (Connection failed: error sending request)"}, true},
		{"codex 400", cliRun{exitCode: 1}, cliResult{isError: true, errText: `{"error":{"message":"bad request","type":"invalid_request_error"}}`}, false},
		{"stderr only", cliRun{exitCode: 1, stderr: "warning\nError: connect ECONNREFUSED 127.0.0.1:443"}, cliResult{}, true},
		{"tests failed", cliRun{exitCode: 1, stderr: "FAIL example.com/greet"}, cliResult{isError: true, errText: "tests fail"}, false},
		{"timed out reconnecting", cliRun{exitCode: -1, timedOut: true}, cliResult{isError: true, errText: "Reconnecting... waiting for network (Connection failed: error sending request)"}, true},
		{"timed out in a command", cliRun{exitCode: -1, timedOut: true, busy: "Bash", stderr: "running go test"}, cliResult{}, false},
		{"timed out in a command, provider away", cliRun{exitCode: -1, timedOut: true, busy: "Bash"}, cliResult{isError: true, errText: "stream disconnected before completion"}, true},
		{"timed out waiting for the model", cliRun{exitCode: -1, timedOut: true, stderr: "thinking"}, cliResult{}, true},
	}
	for _, c := range cases {
		if got := outage(c.run, c.res) != ""; got != c.want {
			t.Errorf("%s: outage = %q, want outage %v", c.name, outage(c.run, c.res), c.want)
		}
	}
}
