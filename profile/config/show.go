package config

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/recovery"
)

// mask replaces a secret value in what WriteShow prints.
const mask = "****"

// Masked returns a copy of p fit to print: every value of a CLI template's
// env is masked (they are environment values, which may be keys), as are
// command arguments that follow or carry a secret-looking flag
// (--api-key X, --token=X) and the password and secret-looking query
// values of the provider's base URL. Names of environment variables, such
// as provider.api_key_env, are shown.
func (p Profile) Masked() Profile {
	out := p.clone()
	for name, t := range out.Agents {
		for k := range t.Env {
			t.Env[k] = mask
		}
		t.Command = maskArgs(t.Command)
		t.ResumeCommand = maskArgs(t.ResumeCommand)
		out.Agents[name] = t
	}
	out.Provider.BaseURL = maskURL(out.Provider.BaseURL)
	maskNotify(out.Notify)
	return out
}

// WriteShow writes p, masked, as YAML for "gaffer config show": a comment
// naming the profile, a "# DANGER:" comment for each CLI template that
// skips its agent's permission prompts (Unattended; the flags themselves
// are marked in place too), then its settings. When recovery is on, every
// recovery threshold and budget is shown with the value a run takes, the
// defaults included. As a last guard, any scalar whose
// key looks secret (api_key, token, password, ...) is masked too.
func WriteShow(w io.Writer, p Profile) error {
	m := p.Masked()
	if m.Recovery.On() {
		m.Recovery.RecoveryTuning = m.Recovery.RecoveryTuning.Over(recovery.Defaults())
		m.Recovery.RecoveryRules = m.Recovery.RecoveryRules.Over(recovery.DefaultRules())
	}
	var n yaml.Node
	if err := n.Encode(m); err != nil {
		return fmt.Errorf("config: show: %w", err)
	}
	maskSecretKeys(&n)
	markDangerous(&n)
	if _, err := fmt.Fprintf(w, "# profile %s (secrets masked)\n", p.Name); err != nil {
		return fmt.Errorf("config: show: %w", err)
	}
	for _, l := range p.Unattended() {
		if _, err := fmt.Fprintf(w, "# DANGER: %s\n", l); err != nil {
			return fmt.Errorf("config: show: %w", err)
		}
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return fmt.Errorf("config: show: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("config: show: %w", err)
	}
	return nil
}

// maskSecretKeys masks, in place, every scalar value under a secret-looking
// key.
func maskSecretKeys(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Kind == yaml.ScalarNode && looksSecret(n.Content[i].Value) {
				v.Value, v.Tag, v.Style = mask, "!!str", 0
			}
		}
	}
	for _, c := range n.Content {
		maskSecretKeys(c)
	}
}

// looksSecret reports whether a key or flag names a secret: one of its
// words (split at _, - and .) is key, apikey,
// token, secret, password, passwd, credential(s) or auth. A name ending in
// _env names an environment variable, not a secret.
func looksSecret(name string) bool {
	lower := strings.ToLower(strings.TrimLeft(name, "-"))
	if strings.HasSuffix(lower, "_env") || strings.HasSuffix(lower, "-env") {
		return false
	}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch w {
		case "key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials", "auth":
			return true
		}
	}
	return false
}

// maskArgs masks the values of secret-looking flags in args.
func maskArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if flag, _, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") && looksSecret(flag) {
			out[i] = flag + "=" + mask
		} else if i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && looksSecret(args[i-1]) {
			out[i] = mask
		}
	}
	return out
}

// maskURL masks a URL's password and its secret-looking query values.
func maskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), mask)
	}
	q := u.Query()
	changed := false
	for k := range q {
		if looksSecret(k) {
			q.Set(k, mask)
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	masked := url.QueryEscape(mask)
	return strings.ReplaceAll(u.String(), masked, mask) // "****", not "%2A%2A%2A%2A"
}
