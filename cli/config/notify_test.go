package config

import (
	"errors"
	"strings"
	"testing"
)

const notifyYAML = `profiles:
  default:
    notify:
      url: https://inbox.example/
      events: [awaiting_approval, completed]
      targets:
        - webhook: {url: "https://hooks.slack.com/services/T0/B0/XXXXSECRET", format: slack}
        - webhook:
            url: https://example.com/hook
            secret_env: GAFFER_HOOK_SECRET
        - ntfy: {url: "https://ntfy.sh/my-private-topic", priority: high}
        - command: {run: [notify-send, gaffer]}
`

func TestNotifySection(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte(notifyYAML))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Effective("")
	if err != nil {
		t.Fatal(err)
	}
	rc := p.Notify.RunConfig()
	if rc == nil || len(rc.Targets) != 4 || rc.Targets[1].SecretEnv != "GAFFER_HOOK_SECRET" || rc.Targets[0].Format != "slack" ||
		rc.Targets[2].Priority != "high" || rc.Targets[3].Run[0] != "notify-send" || len(rc.Events) != 2 {
		t.Fatalf("run config %+v", rc)
	}
	var b strings.Builder
	if err := WriteShow(&b, p); err != nil {
		t.Fatal(err)
	}
	show := b.String()
	for _, secret := range []string{"XXXXSECRET", "my-private-topic"} {
		if strings.Contains(show, secret) {
			t.Errorf("config show shows %q:\n%s", secret, show)
		}
	}
	for _, want := range []string{"notify:", "secret_env: GAFFER_HOOK_SECRET", "https://hooks.slack.com/****", "notify-send"} {
		if !strings.Contains(show, want) {
			t.Errorf("config show lacks %q:\n%s", want, show)
		}
	}
}

func TestNotifyErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown key", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook: {url: 'http://x', secret: abc}\n",
			`gaffer.yaml:5: unknown key "secret" in profiles.p.notify.targets[0].webhook`},
		{"unknown target", "profiles:\n  p:\n    notify:\n      targets:\n        - slack: {url: 'http://x'}\n",
			`gaffer.yaml:5: unknown key "slack" in profiles.p.notify.targets[0]`},
		{"two kinds", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook: {url: 'http://x'}\n          ntfy: {url: 'http://y'}\n",
			`gaffer.yaml:3: notify.targets[0] must be one of webhook, ntfy or command`},
		{"bad url", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy:\n            url: ntfy.sh/topic\n",
			`gaffer.yaml:6: notify.targets[0].ntfy.url: "ntfy.sh/topic" must be an http or https URL`},
		{"secret not name", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook:\n            url: http://x\n            secret_env: abc def\n",
			`gaffer.yaml:7: notify.targets[0].webhook.secret_env must name an environment variable, not hold the secret`},
		{"unknown event", "profiles:\n  p:\n    notify:\n      events: [done]\n",
			`gaffer.yaml:4: unknown notify event "done" (want awaiting_approval, needs_human, halted, failed, completed, budget_warning)`},
		{"empty command", "profiles:\n  p:\n    notify:\n      targets:\n        - command: {run: []}\n",
			`gaffer.yaml:5: notify.targets[0].command.run must name a command (a list: [notify-send, gaffer])`},
		{"bad priority", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy: {url: 'http://x/t', priority: loud}\n",
			`gaffer.yaml:5: notify.targets[0].ntfy.priority "loud": want 1-5 or min, low, default, high, max, urgent`},
		{"command not list", "profiles:\n  p:\n    notify:\n      targets:\n        - command: {run: notify-send gaffer}\n",
			`gaffer.yaml:5: profiles.p.notify.targets[0].command.run must be a list, not "notify-send gaffer"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("gaffer.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Fatalf("Parse error = %v\nwant %s", err, c.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not match ErrInvalid", err)
			}
		})
	}
}
