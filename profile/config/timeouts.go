package config

import (
	"strings"
	"time"
)

// Defaults of the built-in profile's timeouts.
const (
	// DefaultCallTimeout bounds one model call of the llm driver: long
	// enough for a slow answer of a large model, short enough that a
	// provider that accepts the request and never answers is noticed
	// within minutes.
	DefaultCallTimeout = 5 * time.Minute
	// DefaultCallAttempts is how many times the llm driver tries one model
	// call on a rate limit, a server error or no answer: with the backoff
	// between them, a hung provider stops a session after about
	// 4 × DefaultCallTimeout.
	DefaultCallAttempts = 4
	// DefaultSessionTimeout bounds one session's wall time: a CLI agent's
	// process, or an llm session's whole conversation.
	DefaultSessionTimeout = 60 * time.Minute
)

// Timeouts bound a role's model calls and sessions. The profile's apply to
// every role whose own (roles.<role>.timeouts) leave a key out. Durations
// are Go duration strings ("90s", "5m", "1h30m").
type Timeouts struct {
	// Call bounds one model call of the llm driver (the request and its
	// whole answer). CLI agents make their own calls.
	Call string `yaml:"call,omitempty"`
	// CallAttempts is how many times the llm driver tries one model call
	// on 429, 5xx or no answer (a timeout, a refused connection), with
	// backoff between tries.
	CallAttempts int `yaml:"call_attempts,omitempty"`
	// Session bounds one session's wall time: a CLI agent's process (its
	// whole process group is killed), or an llm session.
	Session string `yaml:"session,omitempty"`
}

// Values returns the timeouts as durations; an absent or invalid one is
// 0 (the driver's default). A validated profile has none invalid. Space
// around a duration (" 2s", a block scalar's "2s\n") is no part of it, as
// validation reads it: the run uses the value validation let through.
func (t Timeouts) Values() (call time.Duration, attempts int, session time.Duration) {
	call, _ = time.ParseDuration(strings.TrimSpace(t.Call))
	session, _ = time.ParseDuration(strings.TrimSpace(t.Session))
	return max(call, 0), max(t.CallAttempts, 0), max(session, 0)
}

// trimmed is t with the space around its durations gone: what `config
// show` prints is then the value the run uses.
func (t Timeouts) trimmed() Timeouts {
	t.Call, t.Session = strings.TrimSpace(t.Call), strings.TrimSpace(t.Session)
	return t
}

// mergeTimeouts returns over laid on base, key by key, trimmed.
func mergeTimeouts(base, over Timeouts) Timeouts {
	base, over = base.trimmed(), over.trimmed()
	return Timeouts{Call: or(over.Call, base.Call), CallAttempts: or(over.CallAttempts, base.CallAttempts), Session: or(over.Session, base.Session)}
}

// checkTimeouts rejects timeouts a run could not use, naming the key at
// path (profiles.fast.timeouts, profiles.fast.roles.developer.timeouts):
// a duration that does not parse or is not above 0, a call_attempts given
// as 0 or less.
func (c *Config) checkTimeouts(at string, t Timeouts) error {
	durations := []struct{ key, val, example string }{{"call", t.Call, "5m"}, {"session", t.Session, "60m"}}
	for _, d := range durations {
		if _, set := c.lines[at+"."+d.key]; !set && d.val == "" {
			continue
		}
		v, err := time.ParseDuration(strings.TrimSpace(d.val))
		if err != nil {
			return c.errAt(at+"."+d.key, "%s.%s must be a Go duration such as 90s or %s, not %q", lastKey(at), d.key, d.example, d.val)
		}
		if v <= 0 {
			return c.errAt(at+"."+d.key, "%s.%s must be above 0, got %q; give a duration such as %s, or leave it out for the default", lastKey(at), d.key, d.val, d.example)
		}
	}
	if _, set := c.lines[at+".call_attempts"]; set && t.CallAttempts <= 0 {
		return c.errAt(at+".call_attempts", "%s.call_attempts must be at least 1 (1 is no retry), got %d; leave it out for the default %d", lastKey(at), t.CallAttempts, DefaultCallAttempts)
	}
	return nil
}

// lastKey returns the part of a dotted path after its profile's name:
// "timeouts" or "roles.developer.timeouts".
func lastKey(path string) string {
	if _, rest, ok := strings.Cut(path, "profiles."); ok {
		if _, rest, ok := strings.Cut(rest, "."); ok {
			return rest
		}
	}
	return path
}

// FormatDuration writes d as a Go duration string without its zero
// units: "5m", "1h", "1h30m", "1m30s".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
