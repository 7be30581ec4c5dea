package profile

import (
	"os"
	"slices"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestNotifyVariablesAreKeys: the url_env and secret_env of a run's notify
// targets are keys as its api_key_env is: the vault takes them out of the
// environment and still answers them (the deliverer reads them there), and
// the agents' environment lacks them unless a CLI agent's pass_env lists
// them.
func TestNotifyVariablesAreKeys(t *testing.T) {
	t.Setenv("GAFFER_TEST_K_API", "sk-api-canary")
	t.Setenv("GAFFER_TEST_K_HOOK", "http://127.0.0.1:9/services/hook-canary")
	t.Setenv("GAFFER_TEST_K_SECRET", "hmac-canary")
	t.Setenv("GAFFER_TEST_K_TOPIC", "http://127.0.0.1:9/topic-canary")
	t.Setenv("GAFFER_TEST_K_VISIBLE", "visible")
	cfg := state.RunConfig{
		Drivers: state.DriverSettings{APIKeyEnv: "GAFFER_TEST_K_API",
			CLIAgents: map[string]state.CLIAgent{"dev": {PassEnv: []string{"GAFFER_TEST_K_SECRET"}}}},
		Notify: &state.NotifyConfig{Targets: []state.NotifyTarget{
			{Kind: "webhook", URLEnv: "GAFFER_TEST_K_HOOK", SecretEnv: "GAFFER_TEST_K_SECRET"},
			{Kind: "ntfy", URLEnv: "GAFFER_TEST_K_TOPIC"},
			{Kind: "webhook", URL: "http://127.0.0.1:9/plain"},
			{Kind: "command", Run: []string{"true"}},
		}},
	}
	want := []string{"GAFFER_TEST_K_API", "GAFFER_TEST_K_HOOK", "GAFFER_TEST_K_SECRET", "GAFFER_TEST_K_TOPIC"}
	if got := keyNames(cfg); !slices.Equal(got, want) {
		t.Fatalf("keyNames = %q, want %q", got, want)
	}

	v := NewKeyVault()
	if err := v.take(keyNames(cfg)); err != nil {
		t.Fatal(err)
	}
	for _, n := range want {
		if _, ok := os.LookupEnv(n); ok {
			t.Errorf("%s is still in the environment", n)
		}
	}
	if got := v.Getenv("GAFFER_TEST_K_HOOK"); got != "http://127.0.0.1:9/services/hook-canary" {
		t.Errorf("the vault answers GAFFER_TEST_K_HOOK with %q", got)
	}
	if got := v.Getenv("GAFFER_TEST_K_SECRET"); got != "hmac-canary" {
		t.Errorf("the vault answers GAFFER_TEST_K_SECRET with %q", got)
	}

	for _, c := range []struct {
		name string
		pass []string
		want []string // the keys the environment holds
	}{
		{"no pass_env", nil, nil},
		{"pass_env lists the secret", []string{"GAFFER_TEST_K_SECRET"}, []string{"GAFFER_TEST_K_SECRET=hmac-canary"}},
	} {
		// Without a vault (a test's in-process App) the environment still
		// holds the keys, and agentEnviron withholds them.
		for _, vault := range []bool{true, false} {
			getenv := v.Getenv
			if !vault {
				for _, n := range want {
					t.Setenv(n, v.Getenv(n))
				}
				getenv = os.Getenv
			}
			env := agentEnviron(cfg, c.pass, getenv)
			if !slices.Contains(env, "GAFFER_TEST_K_VISIBLE=visible") {
				t.Fatalf("%s (vault %v): the environment lacks the control variable", c.name, vault)
			}
			var keys []string
			for _, kv := range env {
				if n, _, _ := splitEnv(kv); slices.Contains(want, n) {
					keys = append(keys, kv)
				}
			}
			if !slices.Equal(keys, c.want) {
				t.Errorf("%s (vault %v): the agents' environment holds %q, want %q", c.name, vault, keys, c.want)
			}
			for _, n := range want {
				os.Unsetenv(n)
			}
		}
	}
}
