package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent"
	"github.com/gaffer-dev/gaffer/agent/llm"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/state"
)

// roles lists the agent roles in the order messages name them; the
// summarizer only runs when its profile names a driver, the doctor and
// the replanner only when recovery is on.
func roles() []agent.Role {
	return []agent.Role{agent.RoleArchitect, agent.RoleDeveloper, agent.RoleReviewer, agent.RoleEvaluator, agent.RoleSummarizer,
		agent.RoleDoctor, agent.RoleReplanner}
}

// runProfile is what a run takes from its effective profile: each role's
// driver, model and CLI template, the drivers' settings, the limits and
// the TDD check. It goes into state.RunConfig, so that resume rebuilds the
// same drivers without flags and without reading gaffer.yaml again.
type runProfile struct {
	name    string
	agents  state.Agents
	drivers state.DriverSettings
	limits  state.Limits
	skipTDD bool
	// parallel is how many lanes of a phase run at once (the profile's
	// parallel, its default filled in).
	parallel int
	mode     state.ExecMode // the profile's mode:
	strict   bool           // strict_files: true
	// recovery is set unless the profile says recovery.enabled: false;
	// nil, nothing of it reaches the run's state.
	recovery *state.RecoveryConfig
	notify   *state.NotifyConfig // the profile's notify section (URLs and variables' names)
}

// resolveProfile loads the configuration for the repository in repoDir
// (gaffer.yaml there, else the user's), takes the effective profile o
// names (--profile, GAFFER_PROFILE; else the file's default) and lays the
// --driver and --model flags over every role. A configuration that does
// not load is host.Invalid, an unknown profile or --driver host.Usage, as is
// the script driver without --script; a profile that is incomplete for a
// role (no model, agent or provider; an unknown driver) is host.Invalid.
// Every role's problem is listed (problems), not only the first.
func resolveProfile(repoDir string, o request, getenv func(string) string) (runProfile, error) {
	p, err := loadProfile(repoDir, o.Profile, getenv)
	if err != nil {
		return runProfile{}, err
	}
	rp := baseProfile(p)
	var probs problems
	var needScript []string // the roles of the script driver, without --script
	usesLLM := false
	for _, r := range roles() {
		rs, on := roleSettings(p, r, rp.recovery != nil, o)
		if !on {
			continue
		}
		usesLLM = usesLLM || rs.Driver == config.DriverLLM
		ac, err := rp.agentOf(p, r, rs, o)
		switch {
		case errors.Is(err, errNeedsScript):
			if r != agent.RoleDoctor && r != agent.RoleReplanner { // optional: a script without entries has none
				needScript = append(needScript, string(r))
			}
			continue
		case errors.Is(err, errBadDriverFlag):
			return rp, usageErrorf("--driver %q: want script, llm or cli", o.Driver) // a bad flag value, said once
		case err != nil:
			probs.add(err)
			continue
		}
		rp.addAgent(p, r, ac)
	}
	if len(needScript) > 0 {
		probs.add(usageErrorf("the script driver (%s) needs --script FILE (its format: gaffer help script-format)", strings.Join(needScript, ", ")))
	}
	rp.drivers.MaxTurns = p.Limits.MaxTurns
	rp.drivers.MaxTokensPerSession = p.Limits.MaxTokensPerSession
	if usesLLM {
		probs.add(rp.setProvider(p))
	}
	return rp, probs.err()
}

// loadProfile loads the configuration for the repository in repoDir and
// returns the effective profile name names.
func loadProfile(repoDir, name string, getenv func(string) string) (config.Profile, error) {
	cfg, err := config.Load(repoDir, getenv)
	if err != nil {
		return config.Profile{}, errorf(host.Invalid, "%w", err)
	}
	p, err := cfg.Effective(name)
	if errors.Is(err, config.ErrUnknownProfile) {
		return p, usageErrorf("--profile: %v", err)
	}
	if err != nil {
		return p, errorf(host.Invalid, "%w", err)
	}
	return p, nil
}

// baseProfile is what a run takes from p besides its roles: the limits,
// the TDD check, the notify section and, unless it is off, recovery.
func baseProfile(p config.Profile) runProfile {
	rp := runProfile{
		name: p.Name,
		limits: state.Limits{
			MaxTaskReviewIterations: p.Limits.MaxTaskReviewIterations,
			MaxPhaseAttempts:        p.Limits.MaxPhaseAttempts,
			MaxPlanRevisions:        p.Limits.MaxPlanRevisions,
		},
		skipTDD:  !p.TDDCheck(),
		parallel: p.Parallel,
		strict:   p.Strict(),
		notify:   p.Notify.RunConfig(),
	}
	if p.Recovery.On() {
		// The thresholds and budgets the profile sets are the run's from
		// now on: resume uses them, not gaffer.yaml's of the day.
		rp.recovery = &state.RecoveryConfig{RecoveryTuning: p.Recovery.RecoveryTuning.Clone(), RecoveryRules: p.Recovery.RecoveryRules.Clone()}
		for _, f := range p.Recovery.Fatal {
			rp.recovery.Fatal = append(rp.recovery.Fatal, state.FatalPattern{Name: f.Name, Pattern: f.Pattern})
		}
	}
	rp.mode, _ = state.ParseExecMode(p.Mode) // checked when the file was read
	// The run's budget is a limit with recovery on or off.
	rp.limits.MaxRunCostUSD, rp.limits.MaxRunTokens = p.Limits.MaxRunCostUSD, p.Limits.MaxRunTokens
	return rp
}

// roleSettings returns role r's settings in p with the --driver and
// --model flags laid over them, and whether the run has the role at all:
// the summarizer only when the profile names its driver, the doctor and
// the replanner only with recovery.
func roleSettings(p config.Profile, r agent.Role, recovery bool, o request) (config.RoleSettings, bool) {
	rs := p.Role(r)
	if r == agent.RoleSummarizer && rs.Driver == "" {
		return rs, false // optional: off unless roles.summarizer names a driver
	}
	if (r == agent.RoleDoctor || r == agent.RoleReplanner) && !recovery {
		return rs, false // recovery.enabled: false leaves the run as it was
	}
	if o.Driver != "" {
		rs.Driver = config.DriverKind(o.Driver)
	}
	if o.Model != "" {
		rs.Model = o.Model
	}
	return rs, true
}

// Why agentOf makes no agent, besides a problem to list.
var (
	errNeedsScript   = errors.New("the script driver needs a script")
	errBadDriverFlag = errors.New("--driver names no driver")
)

// agentOf is role r's agent from its settings rs: errNeedsScript for the
// script driver without a script, errBadDriverFlag for an unknown driver
// that --driver gave, a host.Invalid refusal for a role the profile
// leaves incomplete. A CLI agent's template goes into rp's drivers.
func (rp *runProfile) agentOf(p config.Profile, r agent.Role, rs config.RoleSettings, o request) (state.AgentConfig, error) {
	ac := state.AgentConfig{Driver: string(rs.Driver), Model: rs.Model}
	call, attempts, session := rs.Timeouts.Values()
	switch rs.Driver {
	case config.DriverLLM:
		ac.CallTimeout, ac.CallAttempts, ac.SessionTimeout = call, attempts, session
	case config.DriverCLI:
		ac.SessionTimeout = session // a CLI agent makes its own model calls
	}
	if r == agent.RoleDoctor {
		ac.StrongModel = rs.StrongModel
	}
	if r == agent.RoleDeveloper && rp.recovery != nil {
		ac.EscalationModel = rs.EscalationModel
	}
	switch rs.Driver {
	case config.DriverScript:
		if o.Script == "" {
			return ac, errNeedsScript
		}
		// The models stay: the script matches sessions by them (model:),
		// so an escalation can be played offline.
	case config.DriverLLM:
		if rs.Model == "" {
			return ac, errorf(host.Invalid, "profile %s: the %s uses driver llm but names no model; set model in gaffer.yaml or pass --model", p.Name, r)
		}
	case config.DriverCLI:
		if rs.Agent == "" {
			return ac, errorf(host.Invalid, "profile %s: the %s uses driver cli but names no agent; set agent (%s or one of agents) in gaffer.yaml", p.Name, r, strings.Join(cliagent.VendorNames(), ", "))
		}
		t, ok := p.Template(rs.Agent)
		if !ok {
			return ac, errorf(host.Invalid, "profile %s: the %s uses driver cli with agent %q, which is not defined", p.Name, r, rs.Agent)
		}
		if err := storeTemplate(&rp.drivers, rs.Agent, t); err != nil {
			return ac, err
		}
		ac.Agent = rs.Agent
	default:
		if o.Driver != "" {
			return ac, errBadDriverFlag
		}
		return ac, errorf(host.Invalid, "%w %q for the %s in profile %s: want script, llm or cli", ErrUnsupportedDriver, rs.Driver, r, p.Name)
	}
	return ac, nil
}

// addAgent sets role r's agent ac in rp, with the price p gives its model.
func (rp *runProfile) addAgent(p config.Profile, r agent.Role, ac state.AgentConfig) {
	setAgent(&rp.agents, r, ac)
	if pr, ok := p.Prices[ac.Model]; ok && ac.Model != "" {
		if rp.drivers.Prices == nil {
			rp.drivers.Prices = map[string]state.Price{}
		}
		rp.drivers.Prices[ac.Model] = pr
	}
}

// setProvider sets the llm driver's provider from p: every problem with
// it, listed.
func (rp *runProfile) setProvider(p config.Profile) error {
	prov := p.Provider
	if prov.Name == "" {
		return errorf(host.Invalid, "profile %s: driver llm needs a provider (provider.name: openai, anthropic or ollama in gaffer.yaml)", p.Name)
	}
	var probs problems
	if p.Masked().Provider.BaseURL != prov.BaseURL {
		probs.add(errorf(host.Invalid, "profile %s: provider.base_url carries a password or key, and a run's settings are stored: "+
			"put the key in the variable provider.api_key_env names", p.Name))
	}
	rp.drivers.Provider, rp.drivers.BaseURL = prov.Name, prov.BaseURL
	rp.drivers.APIKeyEnv = or(prov.APIKeyEnv, defaultKeyEnv(prov.Name))
	return probs.err()
}

// storeTemplate adds CLI template t, as name, to d. An env value under a
// secret-looking name is refused: it would be stored with the run.
func storeTemplate(d *state.DriverSettings, name string, t cliagent.Template) error {
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		if secretName(k) {
			return errorf(host.Invalid, "agents.%s.env.%s looks like a secret, and a run's settings are stored: "+
				"set it in the environment and name it in agents.%s.pass_env instead", name, k, name)
		}
	}
	if d.CLIAgents == nil {
		d.CLIAgents = map[string]state.CLIAgent{}
	}
	d.CLIAgents[name] = state.CLIAgent{
		Command: t.Command, ResumeCommand: t.ResumeCommand, Env: t.Env, PassEnv: t.PassEnv,
		Prompt: string(t.Prompt), Output: string(t.Output), Writable: t.Writable,
	}
	return nil
}

// secretName reports whether an environment variable's name marks a
// secret (…_API_KEY, …_TOKEN, …_SECRET, …_PASSWORD).
func secretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, s := range []string{"API_KEY", "ACCESS_KEY", "SECRET", "SECRET_KEY", "TOKEN", "PASSWORD", "AUTH"} {
		if upper == s || strings.HasSuffix(upper, "_"+s) {
			return true
		}
	}
	return false
}

// defaultKeyEnv is the variable the llm driver reads a provider's key
// from when the profile names none; "" for Ollama, which needs no key.
func defaultKeyEnv(provider string) string {
	switch llm.Provider(provider) {
	case llm.ProviderOpenAI:
		return "OPENAI_API_KEY"
	case llm.ProviderAnthropic:
		return "ANTHROPIC_API_KEY"
	}
	return ""
}

func setAgent(a *state.Agents, r agent.Role, ac state.AgentConfig) {
	switch r {
	case agent.RoleArchitect:
		a.Architect = ac
	case agent.RoleDeveloper:
		a.Developer = ac
	case agent.RoleReviewer:
		a.Reviewer = ac
	case agent.RoleEvaluator:
		a.Evaluator = ac
	case agent.RoleSummarizer:
		a.Summarizer = ac
	case agent.RoleDoctor:
		a.Doctor = ac
	case agent.RoleReplanner:
		a.Replanner = ac
	}
}

// checkKeys returns an host.Refused error naming the variable when a
// role of cfg uses the llm driver and the API key's variable is unset or
// empty: run and resume check it before any work.
func checkKeys(cfg state.RunConfig, getenv func(string) string) error {
	name := cfg.Drivers.APIKeyEnv
	if name == "" || llm.Provider(cfg.Drivers.Provider) == llm.ProviderOllama {
		return nil
	}
	for _, r := range roles() {
		if cfg.Agents.Role(string(r)).Driver != string(config.DriverLLM) {
			continue
		}
		if strings.TrimSpace(getenv(name)) == "" {
			return errorf(host.Refused, "%w: set the environment variable %s (the %s's provider %s, profile %s)",
				agent.ErrMissingKey, name, r, cfg.Drivers.Provider, or(cfg.Profile, config.DefaultProfile))
		}
		return nil
	}
	return nil
}

// realDrivers makes the llm and cli drivers from a run's stored settings.
// An llm.Driver is kept per settings, so that a session continued later in
// the same process (the developer through the review loop) finds its
// conversation.
type realDrivers struct {
	out    io.Writer
	getenv func(string) string
	opts   agentOptions

	mu  sync.Mutex
	llm map[string]*llm.Driver
}

func newRealDrivers(out io.Writer, opts agentOptions) *realDrivers {
	return &realDrivers{out: out, getenv: opts.env, opts: opts, llm: map[string]*llm.Driver{}}
}

// driver returns the driver of kind for role.
func (d *realDrivers) driver(role agent.Role, cfg state.RunConfig, kind string) (agent.Driver, error) {
	switch config.DriverKind(kind) {
	case config.DriverLLM:
		return d.llmDriver(cfg)
	case config.DriverCLI:
		return d.cliDriver(role, cfg)
	}
	return nil, fmt.Errorf("%w %q for the %s (this build has: script, llm, cli)", ErrUnsupportedDriver, kind, role)
}

func (d *realDrivers) llmDriver(cfg state.RunConfig) (agent.Driver, error) {
	models := map[agent.Role]string{}
	limits := map[agent.Role]llm.RoleLimits{}
	for _, r := range roles() {
		if ac := cfg.Agents.Role(string(r)); ac.Driver == string(config.DriverLLM) {
			models[r] = ac.Model
			limits[r] = llm.RoleLimits{CallTimeout: ac.CallTimeout, MaxAttempts: ac.CallAttempts, SessionTimeout: ac.SessionTimeout}
		}
	}
	key, err := json.Marshal(struct {
		D state.DriverSettings
		M map[agent.Role]string
		L map[agent.Role]llm.RoleLimits
		K []string // the keys its tools' environment lacks (agentEnviron)
	}{cfg.Drivers, models, limits, keyNames(cfg)})
	if err != nil {
		return nil, fmt.Errorf("llm driver settings: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if drv, ok := d.llm[string(key)]; ok {
		return drv, nil
	}
	drv, err := llm.NewDriver(llm.Config{
		Provider: llm.Provider(cfg.Drivers.Provider), BaseURL: cfg.Drivers.BaseURL, APIKeyEnv: cfg.Drivers.APIKeyEnv,
		Models: models, Limits: limits, MaxTurns: cfg.Drivers.MaxTurns, TokenBudget: cfg.Drivers.MaxTokensPerSession,
		Prices: maps.Clone(cfg.Drivers.Prices), Getenv: d.getenv,
		Toolbox: agent.ToolboxOptions{Env: agentEnviron(cfg, nil, d.getenv), Groups: d.opts.groups, Warn: d.opts.warn},
	})
	if err != nil {
		return nil, err
	}
	d.llm[string(key)] = drv
	return drv, nil
}

func (d *realDrivers) cliDriver(role agent.Role, cfg state.RunConfig) (agent.Driver, error) {
	ac := cfg.Agents.Role(string(role))
	t, ok := cfg.Drivers.CLIAgents[ac.Agent]
	if !ok {
		return nil, fmt.Errorf("%w: the %s's CLI agent %q is not in the run's settings", ErrUnsupportedDriver, role, ac.Agent)
	}
	prices := cfg.Drivers.Prices
	return cliagent.NewDriver(cliagent.Options{
		Template: cliagent.Template{
			Command: slices.Clone(t.Command), ResumeCommand: slices.Clone(t.ResumeCommand), Env: maps.Clone(t.Env),
			PassEnv: slices.Clone(t.PassEnv), Prompt: cliagent.PromptMode(t.Prompt), Output: cliagent.OutputFormat(t.Output),
			Writable: slices.Clone(t.Writable),
		},
		Model: ac.Model, MaxTurns: cfg.Drivers.MaxTurns, Timeout: ac.SessionTimeout,
		Environ: agentEnviron(cfg, t.PassEnv, d.getenv), Groups: d.opts.groups, Warn: d.opts.warn,
		Cost: func(model string, u state.Usage) float64 { return prices[model].Cost(u) },
	})
}

// or returns a unless it is empty, else b.
func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resolve resolves the profile of o for the repository in repoDir and
// checks the API key, before any store is opened, in getenv.
func (o *request) resolve(repoDir string, getenv func(string) string) error {
	rp, err := resolveProfile(repoDir, *o, getenv)
	var probs problems
	probs.add(err)
	probs.add(checkKeys(state.RunConfig{Profile: rp.name, Agents: rp.agents, Drivers: rp.drivers}, getenv))
	probs.add(checkNotifyEnv(rp.notify, rp.name, getenv))
	probs.add(checkExecutables(rp, lookPath))
	if err := probs.err(); err != nil {
		return err
	}
	o.profile = &rp
	return nil
}

// resolved resolves the profile of spec for the repository at root, with
// its keys (in getenv), notify variables and CLI agents' programs
// checked: the first problem found.
func resolved(root string, spec host.RunSpec, getenv func(string) string) (runProfile, error) {
	rp, err := resolveProfile(root, request{RunSpec: spec}, getenv)
	if err != nil {
		return rp, err
	}
	if err := checkKeys(state.RunConfig{Profile: rp.name, Agents: rp.agents, Drivers: rp.drivers}, getenv); err != nil {
		return rp, err
	}
	if err := checkNotifyEnv(rp.notify, rp.name, getenv); err != nil {
		return rp, err
	}
	return rp, checkExecutables(rp, lookPath)
}
