// Package configtest holds what the tests of the packages that read
// gaffer.yaml start from: a configuration of two profiles (fast, an llm
// one with a secret where a run must not store one; cc, a CLI agent's)
// and a repository directory holding a configuration, with no user file
// beside it. It is for tests only.
package configtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Profiles is a gaffer.yaml of two profiles: fast (the default: llm,
// a key in its provider's URL and a token in a CLI agent's env) and cc
// (driver cli, agent claude).
const Profiles = `default_profile: fast
profiles:
  fast:
    driver: llm
    model: gpt-5
    roles:
      reviewer: {model: gpt-5-mini}
    provider: {name: openai, base_url: "https://proxy.example/v1?api_key=hunter2", api_key_env: MY_OPENAI_KEY}
    limits: {max_turns: 7, max_task_review_iterations: 4, max_phase_attempts: 3, max_plan_revisions: 1}
    prices:
      gpt-5: {input: 1.25, output: 10, cached: 0.125}
    agents:
      claude:
        env: {ANTHROPIC_AUTH_TOKEN: hunter3}
    tdd: false
  cc:
    driver: cli
    agent: claude
    model: claude-sonnet-4-5
`

// Dir is a directory whose gaffer.yaml is content, with the user's
// configuration directory (XDG_CONFIG_HOME) empty for the test.
func Dir(t testing.TB, content string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user file
	if err := os.WriteFile(filepath.Join(dir, "gaffer.yaml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
