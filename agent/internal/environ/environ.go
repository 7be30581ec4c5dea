package environ

import "strings"

// Without returns env without the variable name.
func Without(env []string, name string) []string {
	if name == "" {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n != name {
			out = append(out, kv)
		}
	}
	return out
}
