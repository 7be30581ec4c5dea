package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent"
	"github.com/gaffer-dev/gaffer/state"
)

// DriverKind names the kind of driver a role uses.
type DriverKind string

// The drivers a role can use.
const (
	DriverScript DriverKind = "script" // script.Driver: deterministic, offline
	DriverLLM    DriverKind = "llm"    // a language model through the profile's provider
	DriverCLI    DriverKind = "cli"    // cliagent.Driver: an external agent command (see Agent)
)

// Valid reports whether d is one of the drivers.
func (d DriverKind) Valid() bool { return d == DriverScript || d == DriverLLM || d == DriverCLI }

// Defaults of the built-in profile.
const (
	DefaultMaxTurns                = 100
	DefaultMaxTaskReviewIterations = 5
	DefaultMaxPhaseAttempts        = 2
	DefaultMaxPlanRevisions        = 3
)

// DefaultProfile is the name of the profile used when none is named.
const DefaultProfile = "default"

// RoleSettings says how one role's sessions run.
type RoleSettings struct {
	Driver DriverKind `yaml:"driver,omitempty"`
	Model  string     `yaml:"model,omitempty"`
	Agent  string     `yaml:"agent,omitempty"` // the CLI template, for driver cli
	// StrongModel is the Doctor's strong model (roles.doctor only).
	StrongModel string `yaml:"strong_model,omitempty"`
	// EscalationModel is the model a phase the stuck handler escalates
	// runs with (roles.developer only; that phase only).
	EscalationModel string `yaml:"escalation_model,omitempty"`
	// Timeouts are the role's own; a key left out takes the profile's.
	Timeouts Timeouts `yaml:"timeouts,omitempty"`
}

// Roles holds settings for each role; an empty field takes the profile's.
type Roles struct {
	Architect RoleSettings `yaml:"architect,omitempty"`
	Developer RoleSettings `yaml:"developer,omitempty"`
	Reviewer  RoleSettings `yaml:"reviewer,omitempty"`
	Evaluator RoleSettings `yaml:"evaluator,omitempty"`
	// Summarizer is optional: it runs only when it names a driver, and
	// then takes the profile's model and agent where it names none.
	Summarizer RoleSettings `yaml:"summarizer,omitempty"`
	// Doctor diagnoses failed attempts when recovery is on; it takes the
	// profile's driver and model where it names none.
	Doctor RoleSettings `yaml:"doctor,omitempty"`
	// Replanner revises a stuck phase's approach; it takes the
	// architect's settings where it names none.
	Replanner RoleSettings `yaml:"replanner,omitempty"`
}

// Recovery says whether the workflow recovers from phases that keep
// failing (the Doctor, replans, the stuck handler) or halts as it did
// before, and with which thresholds and budgets. Enabled defaults to true.
type Recovery struct {
	Enabled *bool `yaml:"enabled,omitempty"`
	// Fatal adds fatal categories: an error text matching Pattern (a Go
	// regexp) is of category Name and replanned at its first failure.
	Fatal []FatalRule `yaml:"fatal,omitempty"`
	// RecoveryTuning holds the thresholds and budgets (recovery.Config's
	// keys, such as max_replans_per_run), inline in the section. One left
	// out takes recovery's default; one set is used as it is, 0 included
	// (max_replans_per_run: 0: no replans).
	state.RecoveryTuning `yaml:",inline"`
	// RecoveryRules holds the rules of seed 003 (high_risk_categories,
	// low_risk_categories, message_similarity_enabled,
	// fatal_error_types), inline too; one left out takes recovery's
	// default.
	state.RecoveryRules `yaml:",inline"`
}

// FatalRule is one configured fatal category.
type FatalRule struct {
	Name    string `yaml:"name"`
	Pattern string `yaml:"pattern"`
}

// On reports whether recovery is on (it is unless a profile turns it off).
func (r Recovery) On() bool { return r.Enabled == nil || *r.Enabled }

// Provider says where the llm driver finds its model. The API key is read
// from the environment variable APIKeyEnv names; it is never in the file.
type Provider struct {
	Name      string `yaml:"name,omitempty"` // anthropic, openai or ollama
	BaseURL   string `yaml:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env,omitempty"`
}

// Limits bound the workflow and its sessions. In a file, 0 (or leaving a
// limit out) takes the default; in an effective profile, MaxTokensPerSession
// 0 means no limit.
type Limits struct {
	MaxTurns                int `yaml:"max_turns,omitempty"`
	MaxTokensPerSession     int `yaml:"max_tokens_per_session,omitempty"`
	MaxTaskReviewIterations int `yaml:"max_task_review_iterations,omitempty"`
	MaxPhaseAttempts        int `yaml:"max_phase_attempts,omitempty"`
	MaxPlanRevisions        int `yaml:"max_plan_revisions,omitempty"`
	// MaxRunCostUSD and MaxRunTokens are the run's budget (recovery's
	// stuck handler and its 80% warning); 0 is none.
	MaxRunCostUSD float64 `yaml:"max_run_cost_usd,omitempty"`
	MaxRunTokens  int     `yaml:"max_run_tokens,omitempty"`
}

// Profile is one named set of settings. Driver, Model and Agent apply to
// every role that Roles does not set otherwise.
type Profile struct {
	Name     string                       `yaml:"-"`
	Driver   DriverKind                   `yaml:"driver,omitempty"`
	Model    string                       `yaml:"model,omitempty"`
	Agent    string                       `yaml:"agent,omitempty"`
	Timeouts Timeouts                     `yaml:"timeouts,omitempty"` // every role's, unless its own say otherwise
	Roles    Roles                        `yaml:"roles,omitempty"`
	Provider Provider                     `yaml:"provider,omitempty"`
	Limits   Limits                       `yaml:"limits,omitempty"`
	Prices   map[string]state.Price       `yaml:"prices,omitempty"`
	Agents   map[string]cliagent.Template `yaml:"agents,omitempty"` // CLI templates; over the built-in ones (cliagent.BuiltinTemplates)
	TDD      *bool                        `yaml:"tdd,omitempty"`    // check that impl tasks depend on test tasks
	// Parallel is how many lanes of a phase run at once (1 to
	// state.MaxParallel); 0 or absent takes the default.
	Parallel int `yaml:"parallel,omitempty"`
	// Mode is how plans run: auto (or empty: the plan's lines decide),
	// task (phased execution off: one task per phase, in order) or
	// phased (tasks layered by dependency).
	Mode string `yaml:"mode,omitempty"`
	// StrictFiles makes a session's changes outside its tasks' files:
	// lines, or a declared file left untouched, a failed attempt.
	StrictFiles *bool    `yaml:"strict_files,omitempty"`
	Recovery    Recovery `yaml:"recovery,omitempty"`
	Notify      *Notify  `yaml:"notify,omitempty"` // whom runs notify (notify.go)
}

// Builtin returns the built-in default profile: every role on the script
// driver, so nothing is needed offline; the default limits; list prices of
// a few models (override them in a profile); the built-in CLI templates;
// and the TDD check on.
func Builtin() Profile {
	tdd := true
	return Profile{
		Name:   DefaultProfile,
		Driver: DriverScript,
		Timeouts: Timeouts{
			Call:         FormatDuration(DefaultCallTimeout),
			CallAttempts: DefaultCallAttempts,
			Session:      FormatDuration(DefaultSessionTimeout),
		},
		Limits: Limits{
			MaxTurns:                DefaultMaxTurns,
			MaxTaskReviewIterations: DefaultMaxTaskReviewIterations,
			MaxPhaseAttempts:        DefaultMaxPhaseAttempts,
			MaxPlanRevisions:        DefaultMaxPlanRevisions,
		},
		Prices: map[string]state.Price{
			"claude-opus-4-1":   {Input: 15, Output: 75, Cached: 1.5},
			"claude-sonnet-4-5": {Input: 3, Output: 15, Cached: 0.3},
			"claude-haiku-4-5":  {Input: 1, Output: 5, Cached: 0.1},
			"gpt-5":             {Input: 1.25, Output: 10, Cached: 0.125},
		},
		Agents:   cliagent.BuiltinTemplates(),
		TDD:      &tdd,
		Parallel: state.DefaultParallel,
	}
}

// Role returns the settings role r runs with: its own, with the profile's
// driver, model and agent where it has none.
func (p Profile) Role(r agent.Role) RoleSettings {
	var rs RoleSettings
	switch r {
	case agent.RoleArchitect:
		rs = p.Roles.Architect
	case agent.RoleDeveloper:
		rs = p.Roles.Developer
	case agent.RoleReviewer:
		rs = p.Roles.Reviewer
	case agent.RoleEvaluator:
		rs = p.Roles.Evaluator
	case agent.RoleSummarizer:
		if p.Roles.Summarizer.Driver == "" {
			return RoleSettings{}
		}
		rs = p.Roles.Summarizer
	case agent.RoleDoctor:
		rs = p.Roles.Doctor
	case agent.RoleReplanner:
		return mergeRole(p.Role(agent.RoleArchitect), p.Roles.Replanner)
	}
	return mergeRole(RoleSettings{Driver: p.Driver, Model: p.Model, Agent: p.Agent, Timeouts: p.Timeouts}, rs)
}

// Template returns the CLI template named name.
func (p Profile) Template(name string) (cliagent.Template, bool) {
	t, ok := p.Agents[name]
	return t.Clone(), ok
}

// Cost prices u at model's rates; a model without a price costs 0. It
// suits cliagent.Options.Cost.
func (p Profile) Cost(model string, u state.Usage) float64 {
	pr, ok := p.Prices[model]
	if !ok {
		return 0
	}
	return (float64(u.InputTokens)*pr.Input + float64(u.OutputTokens)*pr.Output + float64(u.CachedTokens)*pr.Cached) / 1e6
}

// Strict reports whether strict_files is on (it is off unless a profile
// says strict_files: true).
func (p Profile) Strict() bool { return p.StrictFiles != nil && *p.StrictFiles }

// TDDCheck reports whether the TDD check is on (it is unless a profile
// turns it off).
func (p Profile) TDDCheck() bool { return p.TDD == nil || *p.TDD }

// merge returns over laid on base: every field over sets replaces base's,
// maps merge by key, and CLI templates merge field by field (env by key).
// Neither argument is changed.
func merge(base, over Profile) Profile {
	out := base.clone()
	out.Name = over.Name
	r := mergeRole(RoleSettings{Driver: base.Driver, Model: base.Model, Agent: base.Agent},
		RoleSettings{Driver: over.Driver, Model: over.Model, Agent: over.Agent})
	out.Driver, out.Model, out.Agent = r.Driver, r.Model, r.Agent
	out.Timeouts = mergeTimeouts(base.Timeouts, over.Timeouts)
	out.Roles = Roles{
		Architect:  mergeRole(base.Roles.Architect, over.Roles.Architect),
		Developer:  mergeRole(base.Roles.Developer, over.Roles.Developer),
		Reviewer:   mergeRole(base.Roles.Reviewer, over.Roles.Reviewer),
		Evaluator:  mergeRole(base.Roles.Evaluator, over.Roles.Evaluator),
		Summarizer: mergeRole(base.Roles.Summarizer, over.Roles.Summarizer),
		Doctor:     mergeRole(base.Roles.Doctor, over.Roles.Doctor),
		Replanner:  mergeRole(base.Roles.Replanner, over.Roles.Replanner),
	}
	out.Provider = Provider{
		Name:      or(over.Provider.Name, base.Provider.Name),
		BaseURL:   or(over.Provider.BaseURL, base.Provider.BaseURL),
		APIKeyEnv: or(over.Provider.APIKeyEnv, base.Provider.APIKeyEnv),
	}
	out.Limits = Limits{
		MaxTurns:                or(over.Limits.MaxTurns, base.Limits.MaxTurns),
		MaxTokensPerSession:     or(over.Limits.MaxTokensPerSession, base.Limits.MaxTokensPerSession),
		MaxTaskReviewIterations: or(over.Limits.MaxTaskReviewIterations, base.Limits.MaxTaskReviewIterations),
		MaxPhaseAttempts:        or(over.Limits.MaxPhaseAttempts, base.Limits.MaxPhaseAttempts),
		MaxPlanRevisions:        or(over.Limits.MaxPlanRevisions, base.Limits.MaxPlanRevisions),
		MaxRunCostUSD:           or(over.Limits.MaxRunCostUSD, base.Limits.MaxRunCostUSD),
		MaxRunTokens:            or(over.Limits.MaxRunTokens, base.Limits.MaxRunTokens),
	}
	for m, pr := range over.Prices {
		if out.Prices == nil {
			out.Prices = map[string]state.Price{}
		}
		out.Prices[m] = pr
	}
	for name, t := range over.Agents {
		if out.Agents == nil {
			out.Agents = map[string]cliagent.Template{}
		}
		out.Agents[name] = mergeTemplate(out.Agents[name], t)
	}
	if over.TDD != nil {
		v := *over.TDD
		out.TDD = &v
	}
	out.Parallel = or(over.Parallel, base.Parallel)
	out.Mode = or(over.Mode, base.Mode)
	if over.StrictFiles != nil {
		v := *over.StrictFiles
		out.StrictFiles = &v
	}
	if over.Recovery.Enabled != nil {
		v := *over.Recovery.Enabled
		out.Recovery.Enabled = &v
	}
	if over.Recovery.Fatal != nil {
		out.Recovery.Fatal = slices.Clone(over.Recovery.Fatal)
	}
	out.Recovery.RecoveryTuning = over.Recovery.RecoveryTuning.Over(out.Recovery.RecoveryTuning)
	out.Recovery.RecoveryRules = over.Recovery.RecoveryRules.Over(out.Recovery.RecoveryRules)
	if over.Notify != nil {
		out.Notify = over.Notify.clone()
	}
	return out
}

// resolveRoles fills every role's settings from the profile's.
func (p Profile) resolveRoles() Profile {
	p.Roles = Roles{
		Architect:  p.Role(agent.RoleArchitect),
		Developer:  p.Role(agent.RoleDeveloper),
		Reviewer:   p.Role(agent.RoleReviewer),
		Evaluator:  p.Role(agent.RoleEvaluator),
		Summarizer: p.Role(agent.RoleSummarizer),
		Doctor:     p.Role(agent.RoleDoctor),
		Replanner:  p.Role(agent.RoleReplanner),
	}
	return p
}

func mergeRole(base, over RoleSettings) RoleSettings {
	return RoleSettings{Driver: or(over.Driver, base.Driver), Model: or(over.Model, base.Model), Agent: or(over.Agent, base.Agent),
		StrongModel: or(over.StrongModel, base.StrongModel), EscalationModel: or(over.EscalationModel, base.EscalationModel),
		Timeouts: mergeTimeouts(base.Timeouts, over.Timeouts)}
}

func mergeTemplate(base, over cliagent.Template) cliagent.Template {
	out := base.Clone()
	if over.Command != nil {
		out.Command = slices.Clone(over.Command)
	}
	if over.ResumeCommand != nil {
		out.ResumeCommand = slices.Clone(over.ResumeCommand)
	}
	if over.PassEnv != nil {
		out.PassEnv = slices.Clone(over.PassEnv)
	}
	if over.Writable != nil {
		out.Writable = slices.Clone(over.Writable)
	}
	for k, v := range over.Env {
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		out.Env[k] = v
	}
	out.Prompt = or(over.Prompt, out.Prompt)
	out.Output = or(over.Output, out.Output)
	return out
}

// clone returns a deep copy of p.
func (p Profile) clone() Profile {
	p.Prices = maps.Clone(p.Prices)
	if p.Agents != nil {
		agents := make(map[string]cliagent.Template, len(p.Agents))
		for k, t := range p.Agents {
			agents[k] = t.Clone()
		}
		p.Agents = agents
	}
	if p.TDD != nil {
		v := *p.TDD
		p.TDD = &v
	}
	if p.StrictFiles != nil {
		v := *p.StrictFiles
		p.StrictFiles = &v
	}
	p.Recovery.RecoveryTuning = p.Recovery.RecoveryTuning.Clone()
	p.Recovery.RecoveryRules = p.Recovery.RecoveryRules.Clone()
	p.Notify = p.Notify.clone()
	return p
}

// or returns a unless it is the zero value, else b.
func or[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// CLIOptions returns the options of a cliagent.Driver for role r: the
// role's template, model and session timeout, the profile's turn limit and
// prices. The caller adds what the environment gives (Environ, Env). It is an
// error when the role does not use driver cli or names no known template.
func (p Profile) CLIOptions(r agent.Role) (cliagent.Options, error) {
	rs := p.Role(r)
	if rs.Driver != DriverCLI {
		return cliagent.Options{}, fmt.Errorf("config: profile %s: the %s uses driver %q, not cli", p.Name, r, rs.Driver)
	}
	t, ok := p.Template(rs.Agent)
	if !ok {
		return cliagent.Options{}, fmt.Errorf("config: profile %s: the %s uses agent %q, which is not defined", p.Name, r, rs.Agent)
	}
	_, _, session := rs.Timeouts.Values()
	return cliagent.Options{Template: t, Model: rs.Model, MaxTurns: p.Limits.MaxTurns, Cost: p.Cost, Timeout: session}, nil
}
