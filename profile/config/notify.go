package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// Notify is a profile's notify section: whom a run tells when it needs a
// person or ends (package notify delivers). A profile's section replaces
// the one it is laid over as a whole.
type Notify struct {
	// URL is the inbox's base URL (gaffer serve --ui-addr): a notice
	// links to URL/runs/<id>.
	URL string `yaml:"url,omitempty"`
	// Events are the events notified of; empty: all of them
	// (state.NoticeEvents).
	Events  []string       `yaml:"events,omitempty"`
	Targets []NotifyTarget `yaml:"targets,omitempty"`
}

// NotifyTarget is one receiver; exactly one of its fields is set.
type NotifyTarget struct {
	Webhook *WebhookTarget `yaml:"webhook,omitempty"`
	Ntfy    *NtfyTarget    `yaml:"ntfy,omitempty"`
	Command *CommandTarget `yaml:"command,omitempty"`
}

// WebhookTarget is a JSON POST, signed with HMAC-SHA256 by the secret in
// the environment variable SecretEnv names (never the secret itself).
// Format "slack" posts {"text": …} for a Slack incoming webhook instead.
// Exactly one of URL and URLEnv is set: URLEnv names the environment
// variable holding the URL, for a URL that is itself a secret (a Slack
// webhook's), which checkNotify refuses as a literal URL.
type WebhookTarget struct {
	URL       string `yaml:"url,omitempty"`
	URLEnv    string `yaml:"url_env,omitempty"`
	SecretEnv string `yaml:"secret_env,omitempty"`
	Format    string `yaml:"format,omitempty"`
}

// NtfyTarget is an ntfy topic's URL, or the name of the environment
// variable holding it (URLEnv; exactly one of the two), and the notices'
// priority.
type NtfyTarget struct {
	URL      string `yaml:"url,omitempty"`
	URLEnv   string `yaml:"url_env,omitempty"`
	Priority string `yaml:"priority,omitempty"`
}

// CommandTarget is a local command (argv, run without a shell) given
// GAFFER_EVENT, GAFFER_RUN, GAFFER_URL and GAFFER_TITLE.
type CommandTarget struct {
	Run []string `yaml:"run"`
}

// ntfyPriorities are the priorities ntfy takes.
var ntfyPriorities = []string{"1", "2", "3", "4", "5", "min", "low", "default", "high", "max", "urgent"}

// clone returns a deep copy of n.
func (n *Notify) clone() *Notify {
	if n == nil {
		return nil
	}
	c := *n
	c.Events = slices.Clone(n.Events)
	c.Targets = make([]NotifyTarget, len(n.Targets))
	for i, t := range n.Targets {
		if t.Webhook != nil {
			w := *t.Webhook
			c.Targets[i].Webhook = &w
		}
		if t.Ntfy != nil {
			nt := *t.Ntfy
			c.Targets[i].Ntfy = &nt
		}
		if t.Command != nil {
			c.Targets[i].Command = &CommandTarget{Run: slices.Clone(t.Command.Run)}
		}
	}
	return &c
}

// RunConfig is the section as a run keeps it in its state (URLs that are
// not secrets, argv and variables' names); nil without targets.
func (n *Notify) RunConfig() *state.NotifyConfig {
	if n == nil || len(n.Targets) == 0 {
		return nil
	}
	out := &state.NotifyConfig{URL: n.URL, Events: slices.Clone(n.Events)}
	for _, t := range n.Targets {
		switch {
		case t.Webhook != nil:
			out.Targets = append(out.Targets, state.NotifyTarget{Kind: "webhook", URL: t.Webhook.URL, URLEnv: t.Webhook.URLEnv, SecretEnv: t.Webhook.SecretEnv, Format: t.Webhook.Format})
		case t.Ntfy != nil:
			out.Targets = append(out.Targets, state.NotifyTarget{Kind: "ntfy", URL: t.Ntfy.URL, URLEnv: t.Ntfy.URLEnv, Priority: t.Ntfy.Priority})
		case t.Command != nil:
			out.Targets = append(out.Targets, state.NotifyTarget{Kind: "command", Run: slices.Clone(t.Command.Run)})
		}
	}
	return out
}

// checkNotify rejects nonsense in a profile's notify section at.
func (c *Config) checkNotify(at string, n *Notify) error {
	if n == nil {
		return nil
	}
	at += ".notify"
	if n.URL != "" {
		if err := httpURL(n.URL); err != nil {
			return c.errAt(at+".url", "notify.url %v", err)
		}
	}
	for _, e := range n.Events {
		if !slices.Contains(state.NoticeEvents(), e) {
			return c.errAt(at+".events", "unknown notify event %q (want %s)", e, strings.Join(state.NoticeEvents(), ", "))
		}
	}
	for i, t := range n.Targets {
		ti := fmt.Sprintf("%s.targets[%d]", at, i)
		set := 0
		for _, ok := range []bool{t.Webhook != nil, t.Ntfy != nil, t.Command != nil} {
			if ok {
				set++
			}
		}
		if set != 1 {
			return c.errAt(ti, "notify.targets[%d] must be one of webhook, ntfy or command", i)
		}
		switch {
		case t.Webhook != nil:
			if err := c.checkTargetURL(ti, i, "webhook", t.Webhook.URL, t.Webhook.URLEnv); err != nil {
				return err
			}
			if e := t.Webhook.SecretEnv; e != "" && !isEnvName(e) {
				return c.errAt(ti+".webhook.secret_env", "notify.targets[%d].webhook.secret_env must name an environment variable, not hold the secret", i)
			}
			if f := t.Webhook.Format; f != "" && f != "slack" {
				return c.errAt(ti+".webhook.format", "notify.targets[%d].webhook.format %q: want slack, or leave it out for gaffer's JSON", i, f)
			}
		case t.Ntfy != nil:
			if err := c.checkTargetURL(ti, i, "ntfy", t.Ntfy.URL, t.Ntfy.URLEnv); err != nil {
				return err
			}
			if p := t.Ntfy.Priority; p != "" && !slices.Contains(ntfyPriorities, p) {
				return c.errAt(ti+".ntfy.priority", "notify.targets[%d].ntfy.priority %q: want 1-5 or %s", i, p, strings.Join(ntfyPriorities[5:], ", "))
			}
		case t.Command != nil:
			if len(t.Command.Run) == 0 || t.Command.Run[0] == "" {
				return c.errAt(ti+".command.run", "notify.targets[%d].command.run must name a command (a list: [notify-send, gaffer])", i)
			}
		}
	}
	return nil
}

// checkTargetURL checks the url and url_env of target i, a webhook or
// ntfy target at ti (profiles.<p>.notify.targets[i]): exactly one is
// set, url_env is a variable's name, and url is an http(s) URL that is
// not a secret (SecretURL). No message shows a secret URL.
func (c *Config) checkTargetURL(ti string, i int, kind, u, env string) error {
	at := fmt.Sprintf("notify.targets[%d]", i)
	switch {
	case u != "" && env != "":
		return c.errAt(ti+"."+kind+".url_env", "%s.%s: set url or url_env, not both", at, kind)
	case u == "" && env == "":
		return c.errAt(ti+"."+kind, "%s.%s needs url, or url_env naming the environment variable that holds the URL", at, kind)
	case env != "":
		if !isEnvName(env) {
			return c.errAt(ti+"."+kind+".url_env", "%s.%s.url_env must name an environment variable, not hold the URL", at, kind)
		}
		return nil
	}
	if err := httpURL(u); err != nil {
		return c.errAt(ti+"."+kind+".url", "%s.%s.url %v", at, kind, err)
	}
	if why := SecretURL(u); why != "" {
		return c.errAt(ti+"."+kind+".url", "%s.%s.url holds a secret (%s): put the URL in an environment variable and name it in url_env instead", at, kind, why)
	}
	return nil
}

// secretHosts are the hosts whose URLs' paths are the secret that lets
// anyone post: an incoming webhook's or a public ntfy server's topic.
var secretHosts = []struct {
	host, path, what string // path: the secret paths' prefix ("" any)
}{
	{"hooks.slack.com", "", "a Slack webhook's path"},
	{"discord.com", "/api/webhooks", "a Discord webhook's path"},
	{"discordapp.com", "/api/webhooks", "a Discord webhook's path"},
	{"ptb.discord.com", "/api/webhooks", "a Discord webhook's path"},
	{"canary.discord.com", "/api/webhooks", "a Discord webhook's path"},
	{"ntfy.sh", "", "a public ntfy topic's name"},
}

// SecretURL says why a notify target's literal URL u is a secret, which
// must not go into a run's state (nor its checkpoints, logs or events):
// a host whose paths are secrets (a Slack or Discord webhook, a topic on
// the public ntfy.sh), credentials before the host (user:password@), or
// a secret-looking query parameter (token=, key=, sig=, code=…). It
// returns "" for a URL that is not, such as a local receiver's.
func SecretURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	host := strings.ToLower(p.Hostname())
	for _, h := range secretHosts {
		if host == h.host && strings.HasPrefix(p.Path, h.path) && strings.Trim(p.Path, "/") != "" {
			return h.what
		}
	}
	if p.User != nil {
		return "credentials in the URL"
	}
	for k := range p.Query() {
		switch strings.ToLower(k) {
		case "sig", "signature", "code", "hash":
			return "a secret query parameter"
		}
		if looksSecret(k) {
			return "a secret query parameter"
		}
	}
	return ""
}

// errNotHTTP is httpURL's error. It does not show the value: a secret
// URL pasted without its scheme (hooks.slack.com/services/…) is still a
// secret, and the message goes to the terminal and the logs.
var errNotHTTP = errors.New("must be an http or https URL (starts with http:// or https://)")

// httpURL checks that s is an absolute http or https URL; its error,
// errNotHTTP, follows the field's name.
func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errNotHTTP
	}
	return nil
}

// maskNotify masks the paths of the targets' URLs: a Slack webhook's or
// an ntfy topic's path is what lets anyone post to it.
func maskNotify(n *Notify) {
	if n == nil {
		return
	}
	for _, t := range n.Targets {
		if t.Webhook != nil {
			t.Webhook.URL = maskPath(t.Webhook.URL)
		}
		if t.Ntfy != nil {
			t.Ntfy.URL = maskPath(t.Ntfy.URL)
		}
	}
}

// maskPath masks a URL's path (and query) after its host.
func maskPath(s string) string {
	u, err := url.Parse(maskURL(s))
	if err != nil || u.Host == "" {
		return mask
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return u.Scheme + "://" + u.Host + "/" + mask
	}
	return u.Scheme + "://" + u.Host + "/"
}
