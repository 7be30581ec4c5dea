package secretenv

import "strings"

// suffixes end the names of the variables that hold secrets.
func suffixes() []string {
	return []string{"API_KEY", "ACCESS_KEY", "SECRET", "SECRET_KEY", "TOKEN", "PASSWORD"}
}

// IsSecret reports whether an environment variable's name marks a secret:
// it is one of the suffixes, or ends in "_" and one of them (any case).
func IsSecret(name string) bool {
	upper := strings.ToUpper(name)
	for _, s := range suffixes() {
		if upper == s || strings.HasSuffix(upper, "_"+s) {
			return true
		}
	}
	return false
}

// Without returns a copy of env (NAME=value entries) without the
// variables named like secrets.
func Without(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !IsSecret(name) {
			out = append(out, kv)
		}
	}
	return out
}
