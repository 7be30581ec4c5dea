package state

import (
	"slices"
	"time"
)

// The events a run notifies a person of (NotifyConfig.Events, Notice.Event).
const (
	NoticeAwaitingApproval = "awaiting_approval" // the plan waits for approval
	NoticeNeedsHuman       = "needs_human"       // recovery asks a human
	NoticeHalted           = "halted"            // the run ended halted
	NoticeFailed           = "failed"            // the run ended failed
	NoticeCompleted        = "completed"         // the run ended completed
	NoticeBudgetWarning    = "budget_warning"    // the run spent 80% of its budget
)

// NoticeEvents lists every event a run can notify of, in a fixed order:
// the default of NotifyConfig.Events.
func NoticeEvents() []string {
	return []string{NoticeAwaitingApproval, NoticeNeedsHuman, NoticeHalted, NoticeFailed, NoticeCompleted, NoticeBudgetWarning}
}

// OutboxKeep is how many notices a run's outbox keeps: the newest. A run
// raises a handful (one per plan revision awaiting approval, a question
// or two, one budget warning, its end), and the process holding the store
// delivers each within moments, so the outbox stays small and a
// checkpoint does not grow with it.
const OutboxKeep = 8

// NotifyConfig is whom a run notifies, resolved from its profile when it
// starts (gaffer.yaml's notify section). It holds URLs that are not
// secrets, commands and the NAMES of environment variables, never a
// secret: a URL that is one (a Slack webhook's, whose path lets anyone
// post) is kept as the name of the variable holding it (URLEnv), read by
// the process delivering.
type NotifyConfig struct {
	URL     string         `json:"url,omitempty"`    // the inbox's base URL: a notice links to URL/runs/<id>
	Events  []string       `json:"events,omitempty"` // the events notified of; empty: all (NoticeEvents)
	Targets []NotifyTarget `json:"targets"`
}

// Wants reports whether c notifies of event.
func (c *NotifyConfig) Wants(event string) bool {
	if c == nil || len(c.Targets) == 0 {
		return false
	}
	return len(c.Events) == 0 || slices.Contains(c.Events, event)
}

// NotifyTarget is one receiver of a run's notices.
type NotifyTarget struct {
	Kind string `json:"kind"` // webhook, ntfy or command
	// URL is the webhook's endpoint or the ntfy topic's URL, when it is
	// not a secret; otherwise URLEnv is set instead.
	URL string `json:"url,omitempty"`
	// URLEnv names the environment variable holding the webhook's or
	// ntfy topic's URL (its name only), read at delivery.
	URLEnv string `json:"url_env,omitempty"`
	// SecretEnv names the environment variable holding the webhook's
	// HMAC key (its name only).
	SecretEnv string `json:"secret_env,omitempty"`
	// Format is the webhook body's format: "" (gaffer's JSON) or "slack"
	// ({"text": …}, for an incoming webhook).
	Format   string   `json:"format,omitempty"`
	Priority string   `json:"priority,omitempty"` // ntfy's priority (1-5, min … urgent)
	Run      []string `json:"run,omitempty"`      // the command's argv
}

// Outbox holds a run's notices, in the run's checkpoints: a notice is
// appended in the same checkpoint as the change it tells of, so it is
// delivered even when the process is killed before it delivered it.
// Delivery (package notify) keeps its own cursor beside the store.
type Outbox struct {
	Last    uint64   `json:"last,omitempty"`    // the sequence number of the newest notice
	Entries []Notice `json:"entries,omitempty"` // the newest OutboxKeep notices, oldest first
}

// Notice is one thing a person is told about a run.
type Notice struct {
	Seq   uint64    `json:"seq"` // from 1, per run; with the run id the receivers' idempotency key
	Event string    `json:"event"`
	Time  time.Time `json:"time"`
	Title string    `json:"title"`
	Body  string    `json:"body,omitempty"`
}

// WithNotice returns s with a notice of event appended to its outbox,
// when its config notifies of event; otherwise s unchanged.
func (s ExecutionState) WithNotice(event string, at time.Time, title, body string) ExecutionState {
	if !s.Config.Notify.Wants(event) {
		return s
	}
	c := s
	c.Outbox.Last++
	entries := append(slices.Clone(s.Outbox.Entries), Notice{Seq: c.Outbox.Last, Event: event, Time: at, Title: title, Body: body})
	if n := len(entries); n > OutboxKeep {
		entries = entries[n-OutboxKeep:]
	}
	c.Outbox.Entries = entries
	return c
}
