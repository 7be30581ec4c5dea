package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, t.URL, bytes.NewReader(body))
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
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, t.URL, strings.NewReader(body))
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

func (d *Deliverer) do(req *http.Request) error {
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notify: %s %s: %s", req.Method, req.URL.Redacted(), resp.Status)
	}
	return nil
}

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
