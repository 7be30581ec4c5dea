package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/profile/config/configtest"
)

func TestConfigShowMasksSecrets(t *testing.T) {
	dir := configtest.Dir(t, configtest.Profiles)
	out, code := gaffer(t, "--repo", dir, "config", "show")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"# profile fast", "api_key_env: MY_OPENAI_KEY", "model: gpt-5-mini", "max_turns: 7", "ANTHROPIC_AUTH_TOKEN: '****'"} {
		if !strings.Contains(out, want) {
			t.Errorf("config show lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"hunter2", "hunter3"} {
		if strings.Contains(out, secret) {
			t.Errorf("config show prints the secret %q:\n%s", secret, out)
		}
	}
	out, code = gaffer(t, "--repo", dir, "config", "show", "--profile", "cc")
	if code != 0 || !strings.Contains(out, "# profile cc") || !strings.Contains(out, "driver: cli") {
		t.Fatalf("--profile cc: exit %d\n%s", code, out)
	}
	if out, code = gaffer(t, "--repo", dir, "--profile", "nope", "config", "show"); code != ExitUsage || !strings.Contains(out, "fast") {
		t.Fatalf("unknown profile: exit %d, want %d listing the profiles\n%s", code, ExitUsage, out)
	}
}

func TestConfigShowBadFileIsExit3WithTheLine(t *testing.T) {
	dir := configtest.Dir(t, "profiles:\n  fast:\n    limits:\n      max_turn: 3\n")
	out, code := gaffer(t, "--repo", dir, "config", "show")
	if code != ExitInvalid || !strings.Contains(out, "gaffer.yaml:4: ") || !strings.Contains(out, "max_turn") {
		t.Fatalf("exit %d, want %d with gaffer.yaml:4\n%s", code, ExitInvalid, out)
	}
	if out, code := gaffer(t, "--repo", dir, "run", "--goal", "x"); code != ExitInvalid || !strings.Contains(out, "gaffer.yaml:4: ") {
		t.Fatalf("run with the bad file: exit %d, want %d\n%s", code, ExitInvalid, out)
	}
}

// TestConfigShowMarksAgentsThatSkipPermissionPrompts: the built-in Claude
// Code and Codex templates run their agents without permission prompts;
// config show says so above the settings for the templates the profile
// uses, and beside each such flag.
func TestConfigShowMarksAgentsThatSkipPermissionPrompts(t *testing.T) {
	dir := configtest.Dir(t, configtest.Profiles)
	out, code := gaffer(t, "--repo", dir, "config", "show", "--profile", "cc")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	want := []string{
		"# configuration: " + filepath.Join(dir, "gaffer.yaml"),
		"# profile cc (secrets masked)",
		"# DANGER: agents.claude (the architect, developer, reviewer, evaluator) runs with --dangerously-skip-permissions: " +
			"the agent edits files and runs commands without asking, and gaffer confines only what it writes (Landlock, where the kernel has it), not what it reads or its network",
		"driver: cli",
	}
	if len(lines) < len(want) || !slices.Equal(lines[:len(want)], want) {
		t.Fatalf("config show begins:\n%s\nwant:\n%s", strings.Join(lines[:min(len(lines), len(want))], "\n"), strings.Join(want, "\n"))
	}
	for _, flag := range []string{
		"- --dangerously-skip-permissions # DANGER: skips the agent's permission prompts: it edits files and runs commands without asking",
		"- --dangerously-bypass-approvals-and-sandbox # DANGER: skips the agent's approvals and sandbox: it edits files and runs commands without asking",
	} {
		if strings.Count(out, flag) != 2 { // command and resume_command
			t.Errorf("config show marks %q %d times, want 2:\n%s", flag, strings.Count(out, flag), out)
		}
	}
	// A profile that uses no CLI agent gets no warning above its settings.
	out, _ = gaffer(t, "--repo", dir, "config", "show", "--profile", "fast")
	if strings.Contains(out, "\n# DANGER:") {
		t.Errorf("profile fast uses no CLI agent:\n%s", out)
	}
}

// TestMaxRunsPerRepoFromConfig: gaffer.yaml's max_runs_per_repo is what
// serve uses without --max-runs-per-repo, and config show names it.
func TestMaxRunsPerRepoFromConfig(t *testing.T) {
	dir := configtest.Dir(t, "max_runs_per_repo: 2\n"+configtest.Profiles)
	if n, err := configMaxRunsPerRepo(dir, os.Getenv); err != nil || n != 2 {
		t.Errorf("configMaxRunsPerRepo = %d, %v; want 2", n, err)
	}
	out, code := gaffer(t, "--repo", dir, "config", "show")
	if want := "# max_runs_per_repo: 2 (gaffer serve: runs of this repository at once at most)\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("config show: exit %d, no %q:\n%s", code, want, out)
	}
	if out, _ := gaffer(t, "--repo", configtest.Dir(t, configtest.Profiles), "config", "show"); strings.Contains(out, "max_runs_per_repo") {
		t.Errorf("config show names max_runs_per_repo the file does not set:\n%s", out)
	}
	if n, err := configMaxRunsPerRepo(configtest.Dir(t, configtest.Profiles), os.Getenv); err != nil || n != 0 {
		t.Errorf("configMaxRunsPerRepo without the key = %d, %v; want 0", n, err)
	}
	// serve reads it when the flag is not given: a bad value stops it.
	bad := configtest.Dir(t, "max_runs_per_repo: -1\n")
	out, code = gaffer(t, "--repo", bad, "serve")
	if code != ExitInvalid || !strings.Contains(out, "gaffer.yaml:1: max_runs_per_repo must not be negative, got -1") {
		t.Errorf("serve with a bad max_runs_per_repo: exit %d\n%s", code, out)
	}
	// The flag wins: the key is not read (serve stops later, on a
	// directory that is no repository).
	out, _ = gaffer(t, "--repo", bad, "serve", "--max-runs-per-repo", "1", "--metrics-addr", "127.0.0.1:0")
	if strings.Contains(out, "max_runs_per_repo") {
		t.Errorf("serve --max-runs-per-repo read the file's key:\n%s", out)
	}
}
