package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent"
	"github.com/gaffer-dev/gaffer/state"
)

func TestExampleFile(t *testing.T) {
	c, err := LoadFile(filepath.Join("testdata", "gaffer.yaml"))
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if got := c.Names(); !slices.Equal(got, []string{"default", "fast", "offline"}) {
		t.Errorf("Names = %q", got)
	}
	p, err := c.Effective("")
	if err != nil {
		t.Fatalf("Effective: %v", err)
	}
	if p.Name != "fast" {
		t.Errorf("default profile = %q, want fast (default_profile)", p.Name)
	}
	tm := Timeouts{Call: "3m", CallAttempts: DefaultCallAttempts, Session: "1h"}
	roles := map[agent.Role]RoleSettings{
		agent.RoleArchitect: {Driver: DriverLLM, Model: "claude-opus-4-1", Agent: "claude", Timeouts: Timeouts{Call: "3m", CallAttempts: 2, Session: "1h"}},
		agent.RoleDeveloper: {Driver: DriverCLI, Model: "claude-sonnet-4-5", Agent: "claude", Timeouts: tm},
		agent.RoleReviewer:  {Driver: DriverCLI, Model: "claude-sonnet-4-5", Agent: "claude", Timeouts: tm},
		agent.RoleEvaluator: {Driver: DriverCLI, Model: "claude-sonnet-4-5", Agent: "claude", Timeouts: tm},
	}
	for r, want := range roles {
		if got := p.Role(r); got != want {
			t.Errorf("Role(%s) = %+v, want %+v", r, got, want)
		}
	}
	if p.Roles.Reviewer != roles[agent.RoleReviewer] {
		t.Errorf("Roles.Reviewer = %+v: Effective should fill every role", p.Roles.Reviewer)
	}
	wantLimits := Limits{MaxTurns: 40, MaxTokensPerSession: 200000, MaxTaskReviewIterations: 4, MaxPhaseAttempts: 3, MaxPlanRevisions: 3}
	if p.Limits != wantLimits {
		t.Errorf("Limits = %+v, want %+v (the file's default profile gives 4 review iterations)", p.Limits, wantLimits)
	}
	if p.TDDCheck() {
		t.Error("tdd: false did not turn the TDD check off")
	}
	claude, ok := p.Template("claude")
	if !ok || claude.Env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] != "32000" || claude.Env["IS_SANDBOX"] != "1" ||
		!slices.Equal(claude.Command, cliagent.BuiltinTemplates()["claude"].Command) {
		t.Errorf("claude template = %+v, want the built-in with one more env entry", claude)
	}
	if !slices.Equal(claude.PassEnv, []string{"ANTHROPIC_API_KEY"}) {
		t.Errorf("claude pass_env = %q, want the file's list", claude.PassEnv)
	}
	if aider, ok := p.Template("aider"); !ok || aider.Prompt != cliagent.PromptFile || aider.Command[0] != "aider" {
		t.Errorf("aider template = %+v", aider)
	}
	if _, ok := p.Template("codex"); !ok {
		t.Error("the built-in codex template is gone")
	}
	if got := p.Cost("my-model", state.Usage{InputTokens: 1_000_000, OutputTokens: 500_000, CachedTokens: 2_000_000}); got != 6 {
		t.Errorf("Cost = %v, want 2+2+2", got)
	}
	if _, ok := p.Prices["claude-haiku-4-5"]; !ok {
		t.Error("built-in prices were not kept under the file's")
	}

	off, err := c.Effective("offline")
	if err != nil {
		t.Fatal(err)
	}
	if off.Role(agent.RoleDeveloper).Driver != DriverScript || !off.TDDCheck() || off.Limits.MaxTaskReviewIterations != 4 {
		t.Errorf("offline = %+v, want the built-in default with the file's default profile over it", off)
	}
}

func TestBuiltinDefaults(t *testing.T) {
	c, err := Load(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatalf("Load with no file: %v", err)
	}
	if c.Path() != "" {
		t.Errorf("Path = %q, want none", c.Path())
	}
	p, err := c.Effective("")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != DefaultProfile || p.Role(agent.RoleArchitect).Driver != DriverScript || !p.TDDCheck() {
		t.Errorf("default = %+v", p)
	}
	want := Limits{MaxTurns: DefaultMaxTurns, MaxTaskReviewIterations: 5, MaxPhaseAttempts: 2, MaxPlanRevisions: 3}
	if p.Limits != want {
		t.Errorf("Limits = %+v, want %+v", p.Limits, want)
	}
	if p.Parallel != state.DefaultParallel {
		t.Errorf("Parallel = %d, want the default %d", p.Parallel, state.DefaultParallel)
	}
	// Effective hands out copies.
	p.Agents["claude"].Env["X"] = "y"
	p.Prices["gpt-5"] = state.Price{}
	q, _ := c.Effective("")
	if _, ok := q.Agents["claude"].Env["X"]; ok || q.Prices["gpt-5"] == (state.Price{}) {
		t.Error("changing one effective profile changed the next")
	}
	if _, err := c.Effective("nope"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("Effective(nope) = %v, want ErrUnknownProfile", err)
	}
}

func TestLocate(t *testing.T) {
	repo, xdg := t.TempDir(), t.TempDir()
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	user := filepath.Join(xdg, "gaffer", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("profiles:\n  mine: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(repo, env)
	if err != nil || c.Path() != user || !slices.Contains(c.Names(), "mine") {
		t.Fatalf("Load = %v (path %q), want the user's file", err, c.Path())
	}
	repoFile := filepath.Join(repo, RepoFile)
	if err := os.WriteFile(repoFile, []byte("profiles:\n  ours: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Load(repo, env)
	if err != nil || c.Path() != repoFile || slices.Contains(c.Names(), "mine") {
		t.Fatalf("Load = %v (path %q, names %q), want only the repository's file", err, c.Path(), c.Names())
	}
}

func TestStrictParsing(t *testing.T) {
	cases := []refusal{
		{"unknown key with path", "profiles:\n  fast:\n    limits:\n      max_turns: 3\n      max_turn: 4\n",
			`gaffer.yaml:5: unknown key "max_turn" in profiles.fast.limits`},
		{"unknown top-level key", "profile:\n  fast: {}\n", `gaffer.yaml:1: unknown key "profile" at the top level`},
		{"unknown role", "profiles:\n  p:\n    roles:\n      tester: {driver: cli}\n", `gaffer.yaml:4: unknown key "tester" in profiles.p.roles`},
		{"unknown template key", "profiles:\n  p:\n    agents:\n      x:\n        cmd: [x]\n", `gaffer.yaml:5: unknown key "cmd" in profiles.p.agents.x`},
		{"wrong int", "profiles:\n  p:\n    limits: {max_turns: lots}\n", `gaffer.yaml:3: profiles.p.limits.max_turns must be an integer, not "lots"`},
		{"wrong bool", "profiles:\n  p:\n    tdd: sometimes\n", `gaffer.yaml:3: profiles.p.tdd must be true or false, not "sometimes"`},
		{"wrong float", "profiles:\n  p:\n    prices:\n      m: {input: cheap}\n", `gaffer.yaml:4: profiles.p.prices.m.input must be a number, not "cheap"`},
		{"list for mapping", "profiles:\n  p:\n    limits: [1, 2]\n", `gaffer.yaml:3: profiles.p.limits must be a mapping, not a list`},
		{"mapping for list", "profiles:\n  p:\n    agents:\n      x: {command: {a: b}}\n", `gaffer.yaml:4: profiles.p.agents.x.command must be a list, not a mapping`},
		{"twice", "profiles:\n  p:\n    model: a\n    model: b\n", `gaffer.yaml:4: key "model" in profiles.p is given twice (first on line 3)`},
		{"syntax", "profiles:\n  p: [\n", `gaffer.yaml:2: not valid YAML: did not find expected node content`},
		{"wrong max_runs_per_repo", "max_runs_per_repo: many\n", `gaffer.yaml:1: max_runs_per_repo must be an integer, not "many"`},
		{"max_runs_per_repo in a profile", "profiles:\n  p:\n    max_runs_per_repo: 2\n", `gaffer.yaml:3: unknown key "max_runs_per_repo" in profiles.p`},
	}
	checkRefusals(t, cases)
}

// TestMaxRunsPerRepo: the top-level key, 0 when absent.
func TestMaxRunsPerRepo(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte("max_runs_per_repo: 2\nprofiles:\n  p: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MaxRunsPerRepo(); got != 2 {
		t.Errorf("MaxRunsPerRepo = %d, want 2", got)
	}
	if got := (&Config{}).MaxRunsPerRepo(); got != 0 {
		t.Errorf("MaxRunsPerRepo without a file = %d, want 0", got)
	}
	ex, err := LoadFile(filepath.Join("testdata", "gaffer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ex.MaxRunsPerRepo(); got != 3 {
		t.Errorf("the example's MaxRunsPerRepo = %d, want 3", got)
	}
}

func TestValidation(t *testing.T) {
	cases := []refusal{
		{"negative limit", "profiles:\n  p:\n    limits:\n      max_phase_attempts: -1\n",
			`gaffer.yaml:4: max_phase_attempts must not be negative, got -1`},
		{"unknown driver", "profiles:\n  p:\n    driver: robot\n", `gaffer.yaml:3: unknown driver "robot" in profiles.p (want script, llm or cli)`},
		{"unknown role driver", "profiles:\n  p:\n    roles:\n      reviewer: {driver: human}\n",
			`gaffer.yaml:4: unknown driver "human" in profiles.p.roles.reviewer (want script, llm or cli)`},
		{"unknown provider", "profiles:\n  p:\n    provider: {name: acme}\n", `gaffer.yaml:3: unknown provider "acme" (want anthropic, openai, ollama)`},
		{"key instead of env name", "profiles:\n  p:\n    provider:\n      name: openai\n      api_key_env: sk-abc123\n",
			`gaffer.yaml:5: api_key_env must name an environment variable (such as ANTHROPIC_API_KEY), not hold the key`},
		{"negative price", "profiles:\n  p:\n    prices:\n      m: {input: -1}\n", `gaffer.yaml:4: prices for "m" must not be negative`},
		{"cli without agent", "profiles:\n  p:\n    roles:\n      developer: {driver: cli, agent: nope}\n",
			`gaffer.yaml:4: the developer uses agent "nope", which is not defined (agents: claude, codex, gemini)`},
		{"llm without provider", "profiles:\n  p:\n    driver: llm\n", `gaffer.yaml:2: the architect uses driver llm but the profile has no provider.name`},
		{"bad template", "profiles:\n  p:\n    agents:\n      x: {command: [x], prompt: arg}\n",
			`gaffer.yaml:4: agent "x": agent: invalid CLI template: prompt arg needs {prompt} in command`},
		{"bad profile name", "profiles:\n  \"my profile\": {}\n", `gaffer.yaml:2: profile name "my profile" must be a non-empty word (no spaces or dots)`},
		{"missing default profile", "default_profile: fast\n", `gaffer.yaml:1: default_profile "fast" is not a profile`},
		{"negative max_runs_per_repo", "profiles: {}\nmax_runs_per_repo: -2\n", `gaffer.yaml:2: max_runs_per_repo must not be negative, got -2`},
		{"negative parallel", "profiles:\n  p:\n    parallel: -1\n", `gaffer.yaml:3: parallel must be from 1 to 64 lanes at once (0 or absent: the default 4), got -1`},
		{"parallel over the most", "profiles:\n  p:\n    parallel: 65\n", `gaffer.yaml:3: parallel must be from 1 to 64 lanes at once (0 or absent: the default 4), got 65`},
	}
	checkRefusals(t, cases)
}

func TestWriteShowMasksSecrets(t *testing.T) {
	const (
		envSecret = "sk-ant-env-value-1"
		argSecret = "sk-arg-value-2"
		eqSecret  = "tok-eq-value-3"
		urlSecret = "url-password-4"
	)
	data := `profiles:
  p:
    provider:
      name: anthropic
      base_url: https://me:` + urlSecret + `@proxy.local/v1
      api_key_env: ANTHROPIC_API_KEY
    agents:
      claude:
        env: {ANTHROPIC_API_KEY: ` + envSecret + `, HARMLESS: "1"}
      mine:
        command: [mine, --api-key, ` + argSecret + `, --token=` + eqSecret + `, "--model={model}"]
`
	p := effective(t, data, "p")
	var buf bytes.Buffer
	if err := WriteShow(&buf, p); err != nil {
		t.Fatalf("WriteShow: %v", err)
	}
	out := buf.String()
	for _, secret := range []string{envSecret, argSecret, eqSecret, urlSecret} {
		if strings.Contains(out, secret) {
			t.Errorf("the output shows %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"# profile p (secrets masked)", "api_key_env: ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY: '****'",
		"--token=****", "--model={model}", "https://me:****@proxy.local/v1", "max_task_review_iterations: 5"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if p.Agents["claude"].Env["ANTHROPIC_API_KEY"] != envSecret {
		t.Error("Masked changed the profile it was given")
	}
}

func TestMaskSecretKeys(t *testing.T) {
	for key, want := range map[string]bool{
		"api_key": true, "token": true, "client-secret": true, "password": true, "apikey": true,
		"api_key_env": false, "max_tokens_per_session": false, "model": false, "keyboard": false,
	} {
		if got := looksSecret(key); got != want {
			t.Errorf("looksSecret(%q) = %v, want %v", key, got, want)
		}
	}
}

// FuzzParse checks that no file makes Parse panic, that every error is an
// *Error matching ErrInvalid, and that every profile of a file that parses
// has an effective form.
func FuzzParse(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "gaffer.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("profiles:\n  a: &x {model: m}\n  b: *x\n")
	f.Add("profiles: {p: {limits: {max_turns: 1e3}}}")
	f.Add(notifyYAML)
	f.Add("profiles: {p: {notify: {targets: [{webhook: {url: 'http://x'}, command: {run: [a]}}]}}}")
	f.Fuzz(func(t *testing.T, data string) {
		c, err := Parse("f.yaml", []byte(data))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		for _, n := range c.Names() {
			if _, err := c.Effective(n); err != nil {
				t.Fatalf("Effective(%q) of a parsed file: %v", n, err)
			}
		}
	})
}

func TestCLIOptions(t *testing.T) {
	c, err := LoadFile(filepath.Join("testdata", "gaffer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Effective("fast")
	opts, err := p.CLIOptions(agent.RoleDeveloper)
	if err != nil {
		t.Fatalf("CLIOptions: %v", err)
	}
	if opts.Model != "claude-sonnet-4-5" || opts.MaxTurns != 40 || opts.Template.Env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] != "32000" ||
		opts.Cost("my-model", state.Usage{OutputTokens: 1_000_000}) != 4 {
		t.Errorf("options = %+v", opts)
	}
	if _, err := cliagent.NewDriver(opts); err != nil {
		t.Errorf("cliagent.NewDriver: %v", err)
	}
	if _, err := p.CLIOptions(agent.RoleArchitect); err == nil {
		t.Error("CLIOptions for an llm role did not fail")
	}
}

// TestSummarizerRoleIsOptional: the summarizer is off unless its role
// names a driver, and then takes the profile's model and agent.
func TestSummarizerRoleIsOptional(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte("profiles:\n  off:\n    driver: cli\n    agent: claude\n  on:\n    driver: cli\n    agent: claude\n    model: m1\n    roles:\n      summarizer: {driver: cli}\n"))
	if err != nil {
		t.Fatal(err)
	}
	off, err := c.Effective("off")
	if err != nil {
		t.Fatal(err)
	}
	if got := off.Role(agent.RoleSummarizer); got != (RoleSettings{}) {
		t.Errorf("summarizer without a driver = %+v, want off", got)
	}
	on, err := c.Effective("on")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := on.Role(agent.RoleSummarizer), (RoleSettings{Driver: DriverCLI, Model: "m1", Agent: "claude", Timeouts: Builtin().Timeouts}); got != want {
		t.Errorf("summarizer = %+v, want %+v", got, want)
	}
	if _, err := Parse("gaffer.yaml", []byte("profiles:\n  p:\n    roles:\n      summarizer: {driver: robot}\n")); err == nil || !strings.Contains(err.Error(), "roles.summarizer") {
		t.Errorf("bad summarizer driver: %v", err)
	}
}

// TestParallelSetting: parallel is per profile, over the default profile
// and the built-in default (4).
func TestParallelSetting(t *testing.T) {
	c, err := Parse("gaffer.yaml", []byte("profiles:\n  default:\n    parallel: 2\n  one:\n    parallel: 1\n  other: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"": 2, "one": 1, "other": 2} {
		p, err := c.Effective(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Parallel != want {
			t.Errorf("profile %q: parallel %d, want %d", name, p.Parallel, want)
		}
	}
}
