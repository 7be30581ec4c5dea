package config

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
)

const timeoutsYAML = `profiles:
  default:
    timeouts: {call: 2m}
  mixed:
    driver: cli
    agent: codex
    timeouts: {session: 45m}
    roles:
      architect: {driver: llm, model: gpt-5, timeouts: {call: 90s, call_attempts: 2}}
      developer: {timeouts: {session: 2h}}
    provider: {name: openai}
`

// TestTimeoutsPerRole: a role's timeouts are its own, then its profile's,
// then the file's default profile's, then the built-in defaults, key by
// key; the replanner takes the architect's.
func TestTimeoutsPerRole(t *testing.T) {
	p := effective(t, timeoutsYAML, "mixed")
	type want struct {
		call     time.Duration
		attempts int
		session  time.Duration
	}
	for r, w := range map[agent.Role]want{
		agent.RoleArchitect: {90 * time.Second, 2, 45 * time.Minute},
		agent.RoleReplanner: {90 * time.Second, 2, 45 * time.Minute},
		agent.RoleDeveloper: {2 * time.Minute, DefaultCallAttempts, 2 * time.Hour},
		agent.RoleReviewer:  {2 * time.Minute, DefaultCallAttempts, 45 * time.Minute},
		agent.RoleDoctor:    {2 * time.Minute, DefaultCallAttempts, 45 * time.Minute},
	} {
		call, attempts, session := p.Role(r).Timeouts.Values()
		if got := (want{call, attempts, session}); got != w {
			t.Errorf("%s: timeouts %+v, want %+v", r, got, w)
		}
	}
	b := Builtin()
	if call, attempts, session := b.Role(agent.RoleDeveloper).Timeouts.Values(); call != 5*time.Minute || attempts != 4 || session != time.Hour {
		t.Errorf("built-in: %v, %d, %v; want 5m, 4, 1h", call, attempts, session)
	}
	opts, err := p.CLIOptions(agent.RoleDeveloper)
	if err != nil || opts.Timeout != 2*time.Hour {
		t.Errorf("CLIOptions: timeout %v, %v; want 2h", opts.Timeout, err)
	}
}

// TestTimeoutsValidation: a duration that does not parse, or is not above
// 0, and call_attempts below 1 are refused in one line naming the key and
// the fix.
func TestTimeoutsValidation(t *testing.T) {
	cases := []refusal{
		{"unparseable", "profiles:\n  p:\n    timeouts:\n      call: 5 minutes\n",
			`gaffer.yaml:4: timeouts.call must be a Go duration such as 90s or 5m, not "5 minutes"`},
		{"no unit", "profiles:\n  p:\n    timeouts: {session: 90}\n",
			`gaffer.yaml:3: timeouts.session must be a Go duration such as 90s or 60m, not "90"`},
		{"zero", "profiles:\n  p:\n    timeouts:\n      session: 0s\n",
			`gaffer.yaml:4: timeouts.session must be above 0, got "0s"; give a duration such as 60m, or leave it out for the default`},
		{"negative in a role", "profiles:\n  p:\n    roles:\n      developer:\n        timeouts: {call: -1m}\n",
			`gaffer.yaml:5: roles.developer.timeouts.call must be above 0, got "-1m"; give a duration such as 5m, or leave it out for the default`},
		{"empty string", "profiles:\n  p:\n    timeouts: {call: \"\"}\n",
			`gaffer.yaml:3: timeouts.call must be a Go duration such as 90s or 5m, not ""`},
		{"zero attempts", "profiles:\n  p:\n    timeouts:\n      call_attempts: 0\n",
			`gaffer.yaml:4: timeouts.call_attempts must be at least 1 (1 is no retry), got 0; leave it out for the default 4`},
		{"negative attempts", "profiles:\n  p:\n    roles:\n      doctor: {timeouts: {call_attempts: -3}}\n",
			`gaffer.yaml:4: roles.doctor.timeouts.call_attempts must be at least 1 (1 is no retry), got -3; leave it out for the default 4`},
		{"unknown key", "profiles:\n  p:\n    timeouts: {calls: 5m}\n",
			`gaffer.yaml:3: unknown key "calls" in profiles.p.timeouts`},
	}
	checkRefusals(t, cases)
}

// TestWriteShowTimeoutsPerRole: config show prints every role's timeouts
// as the role takes them.
func TestWriteShowTimeoutsPerRole(t *testing.T) {
	p := effective(t, timeoutsYAML, "mixed")
	var buf bytes.Buffer
	if err := WriteShow(&buf, p); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"timeouts:\n  call: 2m\n  call_attempts: 4\n  session: 45m\n",
		"  architect:\n    driver: llm\n    model: gpt-5\n    agent: codex\n    timeouts:\n      call: 90s\n      call_attempts: 2\n      session: 45m\n",
		"  developer:\n    driver: cli\n    agent: codex\n    timeouts:\n      call: 2m\n      call_attempts: 4\n      session: 2h\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config show lacks\n%s\nin:\n%s", want, out)
		}
	}
}

// TestTimeoutsWithSpaceAround: a duration with space around it (" 2s",
// "2s ", a block scalar's "2s\n") passes validation as 2s, so the role
// uses 2s and `config show` prints 2s, never the value with its space
// while the default is used. Space alone is refused.
func TestTimeoutsWithSpaceAround(t *testing.T) {
	for _, v := range []string{`" 2s"`, `"2s "`, "|\n            2s"} {
		src := "profiles:\n  default:\n    roles:\n      developer:\n        timeouts:\n          session: " + v + "\n          call: " + v + "\n"
		c, err := Parse("gaffer.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		p, err := c.Effective("")
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		call, _, session := p.Role(agent.RoleDeveloper).Timeouts.Values()
		if call != 2*time.Second || session != 2*time.Second {
			t.Errorf("%q: the developer's call %v and session %v, want 2s", v, call, session)
		}
		var show bytes.Buffer
		if err := WriteShow(&show, p); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(show.String(), "      call: 2s\n") || !strings.Contains(show.String(), "      session: 2s\n") {
			t.Errorf("%q: config show does not print 2s:\n%s", v, show.String())
		}
	}
	if _, err := Parse("gaffer.yaml", []byte("profiles:\n  default:\n    timeouts: {call: \"  \"}\n")); err == nil || !strings.Contains(err.Error(), "timeouts.call must be a Go duration") {
		t.Errorf("a call of spaces alone: %v", err)
	}
}
