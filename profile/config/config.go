package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent"
	"github.com/gaffer-dev/gaffer/internal/inputfile"
	"github.com/gaffer-dev/gaffer/internal/strictyaml"
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/telemetry"
)

// RepoFile is the configuration file's name in a repository.
const RepoFile = "gaffer.yaml"

// file is the configuration file's shape.
type file struct {
	DefaultProfile string             `yaml:"default_profile,omitempty"`
	MaxRunsPerRepo int                `yaml:"max_runs_per_repo,omitempty"`
	Profiles       map[string]Profile `yaml:"profiles,omitempty"`
	// Telemetry sends runs to an OpenTelemetry backend (package
	// telemetry); the standard OTEL_* variables win over it.
	Telemetry *telemetry.Config `yaml:"telemetry,omitempty"`
}

// Config is a loaded configuration: the profiles of one file, or none.
type Config struct {
	path  string // "" when no file was found
	f     file
	lines map[string]int
}

// Path returns the file the configuration came from, or "" when none was
// found and only the built-in profile exists.
func (c *Config) Path() string { return c.path }

// Locate returns the configuration file to use for the repository in dir:
// dir/gaffer.yaml when it exists, else $XDG_CONFIG_HOME/gaffer/config.yaml
// ($HOME/.config when XDG_CONFIG_HOME is unset) when it exists, else "".
// getenv reads the environment (os.Getenv in production).
func Locate(dir string, getenv func(string) string) (string, error) {
	candidates := []string{filepath.Join(dir, RepoFile)}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		candidates = append(candidates, filepath.Join(x, "gaffer", "config.yaml"))
	} else if h := getenv("HOME"); h != "" {
		candidates = append(candidates, filepath.Join(h, ".config", "gaffer", "config.yaml"))
	}
	for i, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if i == 0 && errors.Is(err, syscall.ENOTDIR) {
			continue // dir is no directory: not a repository, which opening it says
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("config: %w", err)
		}
	}
	return "", nil
}

// Load loads the configuration Locate finds for dir; with no file, the
// configuration has only the built-in default profile. The first file found
// is the whole configuration: the repository's does not merge with the
// user's.
func Load(dir string, getenv func(string) string) (*Config, error) {
	p, err := Locate(dir, getenv)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return &Config{}, nil
	}
	return LoadFile(p)
}

// MaxFileBytes is the largest configuration file read: 1 MiB.
const MaxFileBytes = 1 << 20

// LoadFile reads and parses the configuration file at path: a regular
// file (a repository's gaffer.yaml may be a symbolic link to /dev/zero) of
// at most MaxFileBytes.
func LoadFile(path string) (*Config, error) {
	data, err := inputfile.Read(path, MaxFileBytes, inputfile.Options{})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a configuration file's content; name is used in errors.
// Parsing is strict: unknown keys, keys given twice and values of the wrong
// type are errors naming the line and where the key is
// (gaffer.yaml:12: unknown key "max_turn" in profiles.fast.limits). Every
// profile is then validated as Effective would give it. Errors match
// ErrInvalid.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{path: name, lines: map[string]int{}}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		line := yamlLine(err)
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("yaml: line %d: ", line))
		return nil, &Error{File: name, Line: line, Err: fmt.Errorf("%w: %s", ErrSyntax, msg)}
	}
	if len(root.Content) == 0 {
		return c, nil // an empty file
	}
	doc := root.Content[0]
	if line, err := checkSchema(doc, reflect.TypeFor[file](), c.lines); err != nil {
		return nil, &Error{File: name, Line: line, Err: err}
	}
	if err := doc.Decode(&c.f); err != nil {
		return nil, &Error{File: name, Line: yamlLine(err), Err: err}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Names returns the names of the profiles, sorted, "default" among them.
func (c *Config) Names() []string {
	names := []string{DefaultProfile}
	for n := range c.f.Profiles {
		if n != DefaultProfile {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// MaxRunsPerRepo is how many runs of the repository `gaffer serve`
// executes at once at most when its --max-runs-per-repo is not given;
// 0 when the file does not say (then: as many as its workers).
func (c *Config) MaxRunsPerRepo() int { return c.f.MaxRunsPerRepo }

// Telemetry returns the file's telemetry block (the zero Config, off
// unless the environment turns it on, when there is none).
func (c *Config) Telemetry() telemetry.Config {
	if c.f.Telemetry == nil {
		return telemetry.Config{}
	}
	return *c.f.Telemetry
}

// DefaultName returns the profile used when none is named: the file's
// default_profile, else "default".
func (c *Config) DefaultName() string { return or(c.f.DefaultProfile, DefaultProfile) }

// Effective returns the profile called name ("" for DefaultName) as it
// applies: the built-in default profile, with the file's "default" profile
// over it, with the named profile over that. Every role's settings are
// filled in. An unknown name is an error matching ErrUnknownProfile.
func (c *Config) Effective(name string) (Profile, error) {
	if name == "" {
		name = c.DefaultName()
	}
	p := merge(Builtin(), c.f.Profiles[DefaultProfile])
	if name != DefaultProfile {
		over, ok := c.f.Profiles[name]
		if !ok {
			return Profile{}, fmt.Errorf("%w %q (the profiles are %s)", ErrUnknownProfile, name, strings.Join(c.Names(), ", "))
		}
		p = merge(p, over)
	}
	p.Name = name
	return p.resolveRoles(), nil
}

// providers returns the provider names the llm driver knows.
func providers() []string { return []string{"anthropic", "openai", "ollama"} }

// isEnvName reports whether s can name an environment variable.
func isEnvName(s string) bool {
	for i, r := range s {
		letter := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}

// validate checks each profile's own settings, then each as Effective
// gives it.
func (c *Config) validate() error {
	if d := c.f.DefaultProfile; d != "" && d != DefaultProfile {
		if _, ok := c.f.Profiles[d]; !ok {
			return c.errAt("default_profile", "default_profile %q is not a profile", d)
		}
	}
	if n := c.f.MaxRunsPerRepo; n < 0 {
		return c.errAt("max_runs_per_repo", "max_runs_per_repo must not be negative, got %d", n)
	}
	if t := c.f.Telemetry; t != nil && t.Endpoint != "" {
		if err := httpURL(t.Endpoint); err != nil {
			return c.errAt("telemetry.endpoint", "telemetry.endpoint: %v (the OTLP/HTTP base URL, as http://127.0.0.1:4318)", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.f.Profiles)) {
		at := "profiles." + name
		if name == "" || strings.ContainsAny(name, " \t\n.") {
			return c.errAt(at, "profile name %q must be a non-empty word (no spaces or dots)", name)
		}
		if err := c.checkOwn(at, c.f.Profiles[name]); err != nil {
			return err
		}
		p, err := c.Effective(name)
		if err != nil {
			return c.errAt(at, "%v", err)
		}
		if err := c.checkEffective(at, p); err != nil {
			return err
		}
	}
	return nil
}

// checkOwn rejects nonsense in the settings a profile gives itself.
func (c *Config) checkOwn(at string, p Profile) error {
	roles := map[string]RoleSettings{
		"": {Driver: p.Driver, Timeouts: p.Timeouts}, "roles.architect": p.Roles.Architect, "roles.developer": p.Roles.Developer,
		"roles.reviewer": p.Roles.Reviewer, "roles.evaluator": p.Roles.Evaluator, "roles.summarizer": p.Roles.Summarizer,
		"roles.doctor": p.Roles.Doctor, "roles.replanner": p.Roles.Replanner,
	}
	for _, sub := range slices.Sorted(maps.Keys(roles)) {
		if d := roles[sub].Driver; d != "" && !d.Valid() {
			return c.errAt(strictyaml.Join(strictyaml.Join(at, sub), "driver"), "unknown driver %q in %s (want script, llm or cli)", d, strictyaml.Join(at, sub))
		}
	}
	for _, sub := range slices.Sorted(maps.Keys(roles)) {
		if err := c.checkTimeouts(strictyaml.Join(strictyaml.Join(at, sub), "timeouts"), roles[sub].Timeouts); err != nil {
			return err
		}
	}
	if _, ok := state.ParseExecMode(p.Mode); !ok {
		return c.errAt(at+".mode", "mode must be auto, task or phased, not %q", p.Mode)
	}
	if n := p.Provider.Name; n != "" && !slices.Contains(providers(), n) {
		return c.errAt(at+".provider.name", "unknown provider %q (want %s)", n, strings.Join(providers(), ", "))
	}
	if e := p.Provider.APIKeyEnv; e != "" && !isEnvName(e) {
		return c.errAt(at+".provider.api_key_env", "api_key_env must name an environment variable (such as ANTHROPIC_API_KEY), not hold the key")
	}
	limits := map[string]int{
		"max_turns": p.Limits.MaxTurns, "max_tokens_per_session": p.Limits.MaxTokensPerSession,
		"max_task_review_iterations": p.Limits.MaxTaskReviewIterations, "max_phase_attempts": p.Limits.MaxPhaseAttempts,
		"max_plan_revisions": p.Limits.MaxPlanRevisions, "max_run_tokens": p.Limits.MaxRunTokens,
	}
	for _, k := range slices.Sorted(maps.Keys(limits)) {
		if limits[k] < 0 {
			return c.errAt(at+".limits."+k, "%s must not be negative, got %d", k, limits[k])
		}
	}
	if n := p.Parallel; n < 0 || n > state.MaxParallel {
		return c.errAt(at+".parallel", "parallel must be from 1 to %d lanes at once (0 or absent: the default %d), got %d",
			state.MaxParallel, state.DefaultParallel, n)
	}
	if err := c.checkTuning(at, p.Recovery.RecoveryTuning); err != nil {
		return err
	}
	var rc recovery.Config
	for i, f := range p.Recovery.Fatal {
		if _, err := regexp.Compile(f.Pattern); err != nil || f.Name == "" || f.Pattern == "" {
			return c.errAt(fmt.Sprintf("%s.recovery.fatal", at), "recovery.fatal[%d] needs a name and a valid Go regexp pattern (%q)", i, f.Pattern)
		}
		rc.Fatal = append(rc.Fatal, recovery.FatalRule{Name: recovery.Category(f.Name), Pattern: f.Pattern})
	}
	// What recovery itself refuses (a name that is not snake_case, a
	// built-in or repeated one) is refused here, not at a run's first
	// failed attempt.
	if _, err := rc.Validate(); err != nil {
		return c.errAt(at+".recovery.fatal", "%v", err)
	}
	// The same for the rules: a risk category that is none, a fatal
	// error type that is a built-in category.
	if _, err := rc.WithRules(p.Recovery.RecoveryRules).Validate(); err != nil {
		return c.errAt(at+".recovery", "%v", err)
	}
	if v := p.Limits.MaxRunCostUSD; v < 0 {
		return c.errAt(at+".limits.max_run_cost_usd", "max_run_cost_usd must not be negative, got %g", v)
	} else if !finite(v) {
		return c.errAt(at+".limits.max_run_cost_usd", "max_run_cost_usd must be a finite number, got %g", v)
	}
	if err := c.checkNotify(at, p.Notify); err != nil {
		return err
	}
	for _, m := range slices.Sorted(maps.Keys(p.Prices)) {
		pr := p.Prices[m]
		if pr.Input < 0 || pr.Output < 0 || pr.Cached < 0 {
			return c.errAt(at+".prices."+m, "prices for %q must not be negative", m)
		}
		if !finite(pr.Input) || !finite(pr.Output) || !finite(pr.Cached) {
			return c.errAt(at+".prices."+m, "prices for %q must be finite numbers", m)
		}
	}
	return nil
}

// finite reports whether v is a finite number (not NaN, not ±Inf).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// checkEffective checks what a profile adds up to: runnable CLI templates,
// a template for every cli role, a provider for every llm role.
func (c *Config) checkEffective(at string, p Profile) error {
	if err := c.checkEffectiveTuning(at, p.Recovery.RecoveryTuning); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(p.Agents)) {
		if err := cliagent.CheckTemplate(p.Agents[name]); err != nil {
			return c.errAt(at+".agents."+name, "agent %q: %v", name, err)
		}
	}
	for _, r := range []agent.Role{agent.RoleArchitect, agent.RoleDeveloper, agent.RoleReviewer, agent.RoleEvaluator, agent.RoleSummarizer, agent.RoleDoctor, agent.RoleReplanner} {
		rs := p.Role(r)
		sub := at + ".roles." + string(r)
		switch rs.Driver {
		case DriverCLI:
			if rs.Agent == "" {
				return c.errAt(sub, "the %s uses driver cli but no agent is named (built-in: %s)", r, strings.Join(cliagent.VendorNames(), ", "))
			}
			if _, ok := p.Agents[rs.Agent]; !ok {
				return c.errAt(sub, "the %s uses agent %q, which is not defined (agents: %s)", r, rs.Agent, strings.Join(slices.Sorted(maps.Keys(p.Agents)), ", "))
			}
		case DriverLLM:
			if p.Provider.Name == "" {
				return c.errAt(sub, "the %s uses driver llm but the profile has no provider.name", r)
			}
		}
	}
	return nil
}

// errAt returns an Error on the line of path, or of its nearest ancestor
// that has one.
func (c *Config) errAt(path, format string, args ...any) error {
	line := 0
	for p := path; p != ""; {
		if l, ok := c.lines[p]; ok {
			line = l
			break
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return &Error{File: c.path, Line: line, Err: fmt.Errorf(format, args...)}
}

// yamlLine returns the first line number in a yaml.v3 error ("yaml: line
// 3: ..."), or 0.
func yamlLine(err error) int {
	_, rest, ok := strings.Cut(err.Error(), "line ")
	if !ok {
		return 0
	}
	n := 0
	for _, r := range rest {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}
