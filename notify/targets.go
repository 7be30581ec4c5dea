package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// The kinds of target (state.NotifyTarget.Kind).
const (
	KindWebhook = "webhook"
	KindNtfy    = "ntfy"
	KindCommand = "command"
)

// FormatSlack is the webhook format of a Slack incoming webhook.
const FormatSlack = "slack"

// SignatureHeader carries the webhook body's HMAC-SHA256, keyed by the
// secret the target's secret_env names: "sha256=" and its hex.
const SignatureHeader = "X-Gaffer-Signature"

// Sign is the SignatureHeader value of body with secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// send makes one attempt to deliver m to t.
func (d *Deliverer) send(t state.NotifyTarget, m Message) error {
	switch t.Kind {
	case KindWebhook:
		return d.webhook(t, m)
	case KindNtfy:
		return d.ntfy(t, m)
	case KindCommand:
		return d.command(t, m)
	}
	return fmt.Errorf("notify: unknown target kind %q", t.Kind)
}

func (d *Deliverer) webhook(t state.NotifyTarget, m Message) error {
	var body []byte
	var err error
	if t.Format == FormatSlack {
		text := m.Title
		if m.Body != "" {
			text += "\n" + m.Body
		}
		if m.URL != "" {
			text += "\n" + m.URL
		}
		body, err = json.Marshal(map[string]string{"text": text})
	} else {
		body, err = json.Marshal(m)
	}
	if err != nil {
		return err
	}
	req, err := d.request(t, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", m.Key)
	if t.SecretEnv != "" {
		secret := d.cfg.Getenv(t.SecretEnv)
		if secret == "" {
			return fmt.Errorf("notify: webhook secret: environment variable %s is not set", t.SecretEnv)
		}
		req.Header.Set(SignatureHeader, Sign([]byte(secret), body))
	}
	return d.do(req)
}

func (d *Deliverer) ntfy(t state.NotifyTarget, m Message) error {
	body := m.Body
	if body == "" {
		body = m.Title
	}
	req, err := d.request(t, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Title", m.Title)
	req.Header.Set("Tags", m.Event)
	if t.Priority != "" {
		req.Header.Set("Priority", t.Priority)
	}
	if m.URL != "" {
		req.Header.Set("Click", m.URL)
	}
	return d.do(req)
}

// request is a POST of body to t's URL: its literal URL, or the one in
// the environment variable its URLEnv names, read now. Neither error
// shows the URL, which may be a secret.
func (d *Deliverer) request(t state.NotifyTarget, body io.Reader) (*http.Request, error) {
	raw := t.URL
	if t.URLEnv != "" {
		raw = strings.TrimSpace(d.cfg.Getenv(t.URLEnv))
		if raw == "" {
			return nil, fmt.Errorf("notify: %s URL: environment variable %s is not set", t.Kind, t.URLEnv)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("notify: %s URL%s is not an http or https URL", t.Kind, fromEnv(t))
	}
	return http.NewRequestWithContext(d.ctx, http.MethodPost, raw, body)
}

// fromEnv names the variable t's URL comes from, for a message.
func fromEnv(t state.NotifyTarget) string {
	if t.URLEnv == "" {
		return ""
	}
	return " (environment variable " + t.URLEnv + ")"
}

// do sends req. Its errors show the URL's scheme and host only (Redact):
// net/http's own (*url.Error) quote the whole URL, whose path may be the
// secret that lets anyone post (a Slack webhook's, an ntfy topic's), and
// they reach the logs.
func (d *Deliverer) do(req *http.Request) error {
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = Redact(req.URL.String()) // the target's, not a redirect's Location
		}
		return scrub(err, req.URL)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notify: %s %s: %s", req.Method, Redact(req.URL.String()), resp.Status)
	}
	return nil
}

// Redact is rawURL as a notify message may show it: its scheme and host,
// and "/…" for a path or query, without credentials.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "…"
	}
	s := u.Scheme + "://" + u.Host
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		s += "/…"
	}
	return s
}

// scrub returns err, or an error with its message without u's path,
// query and credentials should it still hold them (a redirect's error
// quoting its Location, say). The result unwraps to err.
func scrub(err error, u *url.URL) error {
	msg := err.Error()
	clean := msg
	for _, s := range secretParts(u) {
		clean = strings.ReplaceAll(clean, s, "…")
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

// secretParts are the parts of u a message must not show, longest first.
func secretParts(u *url.URL) []string {
	var parts []string
	for _, s := range []string{u.String(), u.RequestURI(), u.EscapedPath(), u.Path, u.RawQuery, u.User.String()} {
		if strings.Trim(s, "/") != "" {
			parts = append(parts, s)
		}
	}
	return parts
}

// scrubbed is an error whose message had a URL's secret parts removed.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// command runs the target's argv, without a shell, with the notice in
// its environment, within Config.CommandTimeout.
func (d *Deliverer) command(t state.NotifyTarget, m Message) error {
	if len(t.Run) == 0 {
		return fmt.Errorf("notify: command target without a command")
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Run[0], t.Run[1:]...)
	cmd.Env = append(os.Environ(), "GAFFER_EVENT="+m.Event, "GAFFER_RUN="+m.Run, "GAFFER_URL="+m.URL,
		"GAFFER_TITLE="+m.Title, "GAFFER_KEY="+m.Key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("notify: command %s: %w: %s", t.Run[0], err, firstLine(out))
	}
	return nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
