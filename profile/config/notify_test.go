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
        - webhook: {url_env: GAFFER_SLACK_URL, format: slack}
        - webhook:
            url: https://example.com/hook
            secret_env: GAFFER_HOOK_SECRET
        - ntfy: {url: "https://ntfy.example/my-private-topic", priority: high}
        - command: {run: [notify-send, gaffer]}
`

func TestNotifySection(t *testing.T) {
	p := effective(t, notifyYAML, "")
	rc := p.Notify.RunConfig()
	if rc == nil || len(rc.Targets) != 4 || rc.Targets[1].SecretEnv != "GAFFER_HOOK_SECRET" || rc.Targets[0].Format != "slack" ||
		rc.Targets[0].URLEnv != "GAFFER_SLACK_URL" || rc.Targets[0].URL != "" || rc.Targets[1].URL != "https://example.com/hook" ||
		rc.Targets[2].Priority != "high" || rc.Targets[3].Run[0] != "notify-send" || len(rc.Events) != 2 {
		t.Fatalf("run config %+v", rc)
	}
	var b strings.Builder
	if err := WriteShow(&b, p); err != nil {
		t.Fatal(err)
	}
	show := b.String()
	for _, secret := range []string{"my-private-topic", "url: \"\"", "url: ''"} {
		if strings.Contains(show, secret) {
			t.Errorf("config show shows %q:\n%s", secret, show)
		}
	}
	for _, want := range []string{"notify:", "url_env: GAFFER_SLACK_URL", "secret_env: GAFFER_HOOK_SECRET", "https://ntfy.example/****", "notify-send"} {
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
		{"bad url", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy:\n            url: ntfy.sh/XXXXSECRET\n",
			`gaffer.yaml:6: notify.targets[0].ntfy.url must be an http or https URL (starts with http:// or https://)`},
		{"slack without scheme", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook: {url: 'hooks.slack.com/services/T0/B0/XXXXSECRET'}\n",
			`gaffer.yaml:5: notify.targets[0].webhook.url must be an http or https URL (starts with http:// or https://)`},
		{"unparsable url", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook: {url: 'https://hooks.slack.com/%zzXXXXSECRET'}\n",
			`gaffer.yaml:5: notify.targets[0].webhook.url must be an http or https URL (starts with http:// or https://)`},
		{"inbox url", "profiles:\n  p:\n    notify:\n      url: inbox.example/XXXXSECRET\n",
			`gaffer.yaml:4: notify.url must be an http or https URL (starts with http:// or https://)`},
		{"secret not name", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook:\n            url: http://x\n            secret_env: abc def\n",
			`gaffer.yaml:7: notify.targets[0].webhook.secret_env must name an environment variable, not hold the secret`},
		{"unknown event", "profiles:\n  p:\n    notify:\n      events: [done]\n",
			`gaffer.yaml:4: unknown notify event "done" (want awaiting_approval, needs_human, halted, failed, completed, budget_warning)`},
		{"empty command", "profiles:\n  p:\n    notify:\n      targets:\n        - command: {run: []}\n",
			`gaffer.yaml:5: notify.targets[0].command.run must name a command (a list: [notify-send, gaffer])`},
		{"bad priority", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy: {url: 'http://x/t', priority: loud}\n",
			`gaffer.yaml:5: notify.targets[0].ntfy.priority "loud": want 1-5 or min, low, default, high, max, urgent`},
		{"url and url_env", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook:\n            url: http://127.0.0.1:9/hook\n            url_env: HOOK_URL\n",
			`gaffer.yaml:7: notify.targets[0].webhook: set url or url_env, not both`},
		{"neither url nor url_env", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy: {priority: high}\n",
			`gaffer.yaml:5: notify.targets[0].ntfy needs url, or url_env naming the environment variable that holds the URL`},
		{"url_env not name", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook:\n            url_env: https://hooks.slack.com/services/T0/B0/X\n",
			`gaffer.yaml:6: notify.targets[0].webhook.url_env must name an environment variable, not hold the URL`},
		{"slack literal", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook: {url: 'https://hooks.slack.com/services/T0/B0/XXXXSECRET', format: slack}\n",
			`gaffer.yaml:5: notify.targets[0].webhook.url holds a secret (a Slack webhook's path): put the URL in an environment variable and name it in url_env instead`},
		{"discord literal", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook:\n            url: https://discord.com/api/webhooks/123/XXXXSECRET\n",
			`gaffer.yaml:6: notify.targets[0].webhook.url holds a secret (a Discord webhook's path): put the URL in an environment variable and name it in url_env instead`},
		{"ntfy.sh literal", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy: {url: 'https://ntfy.sh/XXXXSECRET'}\n",
			`gaffer.yaml:5: notify.targets[0].ntfy.url holds a secret (a public ntfy topic's name): put the URL in an environment variable and name it in url_env instead`},
		{"userinfo", "profiles:\n  p:\n    notify:\n      targets:\n        - webhook: {url: 'https://bot:XXXXSECRET@hooks.example/x'}\n",
			`gaffer.yaml:5: notify.targets[0].webhook.url holds a secret (credentials in the URL): put the URL in an environment variable and name it in url_env instead`},
		{"query token", "profiles:\n  p:\n    notify:\n      targets:\n        - ntfy: {url: 'https://ntfy.example/t?auth=XXXXSECRET'}\n",
			`gaffer.yaml:5: notify.targets[0].ntfy.url holds a secret (a secret query parameter): put the URL in an environment variable and name it in url_env instead`},
		{"command not list", "profiles:\n  p:\n    notify:\n      targets:\n        - command: {run: notify-send gaffer}\n",
			`gaffer.yaml:5: profiles.p.notify.targets[0].command.run must be a list, not "notify-send gaffer"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("gaffer.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Fatalf("Parse error = %v\nwant %s", err, c.want)
			}
			if strings.Contains(err.Error(), "XXXXSECRET") {
				t.Errorf("the error shows the secret: %v", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not match ErrInvalid", err)
			}
		})
	}
}

// TestSecretURL: the hosts whose paths are secrets, credentials and
// secret query parameters are secrets; a local receiver's URL and a
// host's bare address are not.
func TestSecretURL(t *testing.T) {
	for u, secret := range map[string]bool{
		"https://hooks.slack.com/services/T0/B0/X":         true,
		"https://HOOKS.SLACK.COM/services/T0/B0/X":         true,
		"https://discordapp.com/api/webhooks/1/x":          true,
		"https://ptb.discord.com/api/webhooks/1/x":         true,
		"https://ntfy.sh/topic":                            true,
		"https://u:p@example.com/hook":                     true,
		"https://token@example.com/hook":                   true,
		"https://example.com/hook?token=x":                 true,
		"https://example.com/hook?access_token=x":          true,
		"https://prod.logic.azure.example/x?sig=abc&sv=1":  true,
		"http://127.0.0.1:8080/hook":                       false,
		"https://example.com/hook?format=json":             false,
		"https://discord.com/channels/1":                   false,
		"https://ntfy.sh/":                                 false,
		"https://ntfy.internal.example/topic?priority=low": false,
	} {
		if got := SecretURL(u) != ""; got != secret {
			t.Errorf("SecretURL(%q) = %q, want secret %v", u, SecretURL(u), secret)
		}
	}
}
