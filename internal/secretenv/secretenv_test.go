package secretenv

import (
	"slices"
	"testing"
)

func TestIsSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"AWS_SECRET_ACCESS_KEY": true, "GITHUB_TOKEN": true, "OPENAI_API_KEY": true, "db_password": true,
		"TOKEN": true, "CLIENT_SECRET": true, "AWS_ACCESS_KEY": true,
		"PATH": false, "HOME": false, "TOKENS": false, "MYTOKEN": false, "SECRETARY": false, "": false,
	} {
		if got := IsSecret(name); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestWithout(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=ghp_x", "HOME=/h", "AWS_SECRET_ACCESS_KEY=k", "NOVALUE"}
	if got, want := Without(env), []string{"PATH=/bin", "HOME=/h", "NOVALUE"}; !slices.Equal(got, want) {
		t.Errorf("Without = %q, want %q", got, want)
	}
	if len(env) != 5 || env[1] != "GITHUB_TOKEN=ghp_x" {
		t.Errorf("Without changed its input: %q", env)
	}
}
