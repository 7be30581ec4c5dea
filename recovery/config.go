package recovery

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gaffer-dev/gaffer/state"
)

// Config holds the thresholds and budgets of recovery. The zero value of
// a field means "the default" (the seed's values); Validate fills them in.
type Config struct {
	// Replan trigger.
	SimilarityThreshold float64 `json:"similarity_threshold,omitempty" yaml:"similarity_threshold"`   // default 0.8
	MinMessageLength    int     `json:"min_message_length,omitempty" yaml:"min_message_length"`       // default 30 (runes of normalized text)
	TriggerThreshold    int     `json:"trigger_threshold,omitempty" yaml:"trigger_threshold"`         // consecutive similar failures, default 2
	MaxReplansPerPhase  int     `json:"max_replans_per_phase,omitempty" yaml:"max_replans_per_phase"` // default 1
	MaxReplansPerRun    int     `json:"max_replans_per_run,omitempty" yaml:"max_replans_per_run"`     // default 5

	// Doctor.
	DoctorMinAttempts      int     `json:"doctor_min_attempts,omitempty" yaml:"doctor_min_attempts"`               // failed attempts before the Doctor, default 2 (infra: 1)
	MaxDoctorCallsPerPhase int     `json:"max_doctor_calls_per_phase,omitempty" yaml:"max_doctor_calls_per_phase"` // default 2
	MaxDoctorCallsPerRun   int     `json:"max_doctor_calls_per_run,omitempty" yaml:"max_doctor_calls_per_run"`     // default 10
	MaxDoctorStrongPerRun  int     `json:"max_doctor_strong_per_run,omitempty" yaml:"max_doctor_strong_per_run"`   // default 5
	MaxDoctorInfraPerRun   int     `json:"max_doctor_infra_per_run,omitempty" yaml:"max_doctor_infra_per_run"`     // default 3
	MinCheapConfidence     float64 `json:"min_cheap_confidence,omitempty" yaml:"min_cheap_confidence"`             // default 0.7
	ComplexAttempts        int     `json:"complex_attempts,omitempty" yaml:"complex_attempts"`                     // default 4
	MaxEscalationsPerPhase int     `json:"max_escalations_per_phase,omitempty" yaml:"max_escalations_per_phase"`   // default 1

	// Stuck handler.
	ReduceScopeBelow float64 `json:"reduce_scope_below,omitempty" yaml:"reduce_scope_below"` // budget fraction left, default 0.2
	EscalateAbove    float64 `json:"escalate_above,omitempty" yaml:"escalate_above"`         // budget fraction left, default 0.3
	BudgetWarnAt     float64 `json:"budget_warn_at,omitempty" yaml:"budget_warn_at"`         // budget fraction spent, default 0.8

	// Memory bounds.
	MaxFailuresKept int `json:"max_failures_kept,omitempty" yaml:"max_failures_kept"` // per phase, default 6
	MaxTailRunes    int `json:"max_tail_runes,omitempty" yaml:"max_tail_runes"`       // per failure, default 4000
	MaxHintsKept    int `json:"max_hints_kept,omitempty" yaml:"max_hints_kept"`       // per phase, default 4

	// Fatal categories: a match replans at the first failure.
	Fatal []FatalRule `json:"fatal,omitempty" yaml:"fatal"`

	// The rules of seed 003's Doctor table. A nil list takes the default
	// (DefaultHighRisk, DefaultLowRisk, DefaultFatalTypes); an empty one
	// means none.
	//
	// HighRisk lists the categories whose failures get the strong Doctor
	// (while the strong budget lasts), LowRisk those that get the cheap
	// one whatever the phase's history; ChooseTier.
	HighRisk []Category `json:"high_risk_categories,omitempty" yaml:"high_risk_categories"`
	LowRisk  []Category `json:"low_risk_categories,omitempty" yaml:"low_risk_categories"`
	// NoMessageSimilarity is message_similarity_enabled: false: the
	// replan trigger does not compare failure messages, the category of
	// Config.TriggerThreshold failures in a row alone decides.
	NoMessageSimilarity bool `json:"no_message_similarity,omitempty" yaml:"-"`
	// FatalTypes lists the fatal error types: a failure of one of these
	// categories (a Fatal rule's, or the Doctor's diagnosis) is not
	// retried or replanned; the run asks the human at once.
	FatalTypes []Category `json:"fatal_error_types,omitempty" yaml:"fatal_error_types"`
	// DoctorActions lists the optional actions (OptionalActions) the
	// Doctor may choose, by name; an answer naming one left out is
	// refused (CompleteDoctor). Nil takes them all.
	DoctorActions []string `json:"doctor_actions,omitempty" yaml:"doctor_actions"`
}

// DefaultHighRisk returns the default high_risk_categories: seed 003's
// import, logic and patch_apply_error, as gaffer classifies them.
func DefaultHighRisk() []Category { return []Category{CatBuildError, CatTestFailure, CatToolError} }

// DefaultLowRisk returns the default low_risk_categories: seed 003's
// network, as gaffer classifies it. The seed's encoding, file_io and
// validation have no category of their own here.
func DefaultLowRisk() []Category { return []Category{CatInfra} }

// DefaultFatalTypes returns the default fatal_error_types, seed 003's.
func DefaultFatalTypes() []Category {
	return []Category{"wrong_tech_stack", "schema_mismatch", "api_contract_wrong"}
}

// DefaultRules returns recovery's default rules as a RecoveryRules that
// sets every field: what a run takes where its profile sets nothing.
func DefaultRules() state.RecoveryRules {
	names := func(cats []Category) *[]string {
		out := make([]string, len(cats))
		for i, c := range cats {
			out[i] = string(c)
		}
		return &out
	}
	on := true
	acts := DefaultDoctorActions()
	return state.RecoveryRules{
		HighRiskCategories:       names(DefaultHighRisk()),
		LowRiskCategories:        names(DefaultLowRisk()),
		MessageSimilarityEnabled: &on,
		FatalErrorTypes:          names(DefaultFatalTypes()),
		DoctorActions:            &acts,
	}
}

// DefaultDoctorActions returns the default doctor_actions: every
// optional action of the Doctor, by name.
func DefaultDoctorActions() []string {
	var out []string
	for _, a := range OptionalActions() {
		out = append(out, a.String())
	}
	return out
}

// WithRules returns c with the rules r sets laid over it; the rest as c
// has them. Validate (or Apply) checks the result.
func (c Config) WithRules(r state.RecoveryRules) Config {
	cats := func(p *[]string) []Category {
		out := make([]Category, 0, len(*p))
		for _, n := range *p {
			out = append(out, Category(n))
		}
		return out
	}
	if r.HighRiskCategories != nil {
		c.HighRisk = cats(r.HighRiskCategories)
	}
	if r.LowRiskCategories != nil {
		c.LowRisk = cats(r.LowRiskCategories)
	}
	if r.MessageSimilarityEnabled != nil {
		c.NoMessageSimilarity = !*r.MessageSimilarityEnabled
	}
	if r.FatalErrorTypes != nil {
		c.FatalTypes = cats(r.FatalErrorTypes)
	}
	if r.DoctorActions != nil {
		c.DoctorActions = append([]string{}, *r.DoctorActions...)
	}
	return c
}

// Validate returns a copy of c with the defaults filled in, or an error
// matching ErrInvalidConfig that names every bad setting.
func (c Config) Validate() (Config, error) {
	var bad []string
	for _, f := range c.ints() {
		switch {
		case *f.p < 0:
			bad = append(bad, fmt.Sprintf("%s is negative (%d)", f.name, *f.p))
		case *f.p == 0:
			*f.p = f.def
		}
	}
	for _, f := range c.fracs() {
		switch {
		case !inUnit(*f.p):
			bad = append(bad, fmt.Sprintf("%s must be in [0, 1] (got %v)", f.name, *f.p))
		case *f.p == 0:
			*f.p = f.def
		}
	}
	bad = append(bad, c.minimums()...)
	seen := map[Category]bool{}
	for _, r := range c.Fatal {
		switch {
		case r.Name == CatNone || !validName(string(r.Name)):
			bad = append(bad, fmt.Sprintf("fatal category %q: want a snake_case name", r.Name))
		case r.Name.Builtin():
			bad = append(bad, fmt.Sprintf("fatal category %q is a built-in category", r.Name))
		case seen[r.Name]:
			bad = append(bad, fmt.Sprintf("fatal category %q is listed twice", r.Name))
		}
		seen[r.Name] = true
		if r.Pattern == "" {
			bad = append(bad, fmt.Sprintf("fatal category %q has no pattern", r.Name))
		} else if _, err := regexp.Compile(r.Pattern); err != nil {
			bad = append(bad, fmt.Sprintf("fatal category %q: %v", r.Name, err))
		}
	}
	c.Fatal = append([]FatalRule(nil), c.Fatal...)
	c.HighRisk = listOr(c.HighRisk, DefaultHighRisk())
	c.LowRisk = listOr(c.LowRisk, DefaultLowRisk())
	c.FatalTypes = listOr(c.FatalTypes, DefaultFatalTypes())
	if c.DoctorActions == nil {
		c.DoctorActions = DefaultDoctorActions()
	} else {
		c.DoctorActions = append([]string{}, c.DoctorActions...)
	}
	bad = append(bad, c.ruleProblems()...)
	if len(bad) > 0 {
		return Config{}, fmt.Errorf("%w: %v", ErrInvalidConfig, bad)
	}
	return c, nil
}

// Apply returns c validated (Validate, defaults filled in) with every
// setting t holds laid over it. A setting of 0 stays 0 where Validate
// would take the default: max_replans_per_run: 0 means no replans,
// max_doctor_calls_per_run: 0 no Doctor. The result is checked as
// Validate checks, and trigger_threshold must be at least 2,
// max_failures_kept at least trigger_threshold and max_tail_runes at
// least 1; an error matches ErrInvalidConfig and names every bad setting.
func (c Config) Apply(t state.RecoveryTuning) (Config, error) {
	v, err := c.Validate()
	if err != nil {
		return Config{}, err
	}
	ints, fracs := map[string]*int{}, map[string]*float64{}
	for _, f := range v.ints() {
		ints[f.name] = f.p
	}
	for _, f := range v.fracs() {
		fracs[f.name] = f.p
	}
	var bad []string
	for _, f := range t.Fields() {
		switch {
		case f.Int != nil && *f.Int != nil:
			*ints[f.Key] = **f.Int
			if **f.Int < 0 {
				bad = append(bad, fmt.Sprintf("%s is negative (%d)", f.Key, **f.Int))
			}
		case f.Frac != nil && *f.Frac != nil:
			*fracs[f.Key] = **f.Frac
			if !inUnit(**f.Frac) {
				bad = append(bad, fmt.Sprintf("%s must be in [0, 1] (got %v)", f.Key, **f.Frac))
			}
		}
	}
	bad = append(bad, v.minimums()...)
	if len(bad) > 0 {
		return Config{}, fmt.Errorf("%w: %v", ErrInvalidConfig, bad)
	}
	return v, nil
}

// Defaults returns recovery's defaults as a RecoveryTuning that sets
// every field: what a run takes where its profile sets nothing.
func Defaults() state.RecoveryTuning {
	var c Config
	ints, fracs := map[string]int{}, map[string]float64{}
	for _, f := range c.ints() {
		ints[f.name] = f.def
	}
	for _, f := range c.fracs() {
		fracs[f.name] = f.def
	}
	var t state.RecoveryTuning
	for _, f := range t.Fields() {
		if f.Int != nil {
			v := ints[f.Key]
			*f.Int = &v
		} else {
			v := fracs[f.Key]
			*f.Frac = &v
		}
	}
	return t
}

// intSetting is one count of a Config: its field, key and default.
type intSetting struct {
	p    *int
	name string
	def  int
}

// ints lists c's counts, as pointers into c.
func (c *Config) ints() []intSetting {
	return []intSetting{
		{&c.MinMessageLength, "min_message_length", 30},
		{&c.TriggerThreshold, "trigger_threshold", 2},
		{&c.MaxReplansPerPhase, "max_replans_per_phase", 1},
		{&c.MaxReplansPerRun, "max_replans_per_run", 5},
		{&c.DoctorMinAttempts, "doctor_min_attempts", 2},
		{&c.MaxDoctorCallsPerPhase, "max_doctor_calls_per_phase", 2},
		{&c.MaxDoctorCallsPerRun, "max_doctor_calls_per_run", 10},
		{&c.MaxDoctorStrongPerRun, "max_doctor_strong_per_run", 5},
		{&c.MaxDoctorInfraPerRun, "max_doctor_infra_per_run", 3},
		{&c.ComplexAttempts, "complex_attempts", 4},
		{&c.MaxEscalationsPerPhase, "max_escalations_per_phase", 1},
		{&c.MaxFailuresKept, "max_failures_kept", 6},
		{&c.MaxTailRunes, "max_tail_runes", 4000},
		{&c.MaxHintsKept, "max_hints_kept", 4},
	}
}

// fracSetting is one fraction of a Config: its field, key and default.
type fracSetting struct {
	p    *float64
	name string
	def  float64
}

// fracs lists c's fractions, as pointers into c.
func (c *Config) fracs() []fracSetting {
	return []fracSetting{
		{&c.SimilarityThreshold, "similarity_threshold", 0.8},
		{&c.MinCheapConfidence, "min_cheap_confidence", 0.7},
		{&c.ReduceScopeBelow, "reduce_scope_below", 0.2},
		{&c.EscalateAbove, "escalate_above", 0.3},
		{&c.BudgetWarnAt, "budget_warn_at", 0.8},
	}
}

// minimums names the settings of c below their least useful value. A
// zero is taken for "the default" by Validate and is none of them there.
func (c Config) minimums() []string {
	var bad []string
	if c.TriggerThreshold < 2 && c.TriggerThreshold >= 0 {
		bad = append(bad, "trigger_threshold must be at least 2: similarity needs two failures")
	}
	if c.MaxFailuresKept < c.TriggerThreshold && c.MaxFailuresKept >= 0 && c.TriggerThreshold >= 2 {
		bad = append(bad, fmt.Sprintf("max_failures_kept (%d) must be at least trigger_threshold (%d): the trigger compares that many failures", c.MaxFailuresKept, c.TriggerThreshold))
	}
	if c.MaxTailRunes == 0 {
		bad = append(bad, "max_tail_runes must be at least 1")
	}
	return bad
}

// listOr returns a copy of l, or def when l is nil; an empty l stays
// empty.
func listOr(l, def []Category) []Category {
	if l == nil {
		return def
	}
	return append([]Category{}, l...)
}

// ruleProblems names what is wrong with c's rule lists: a fatal error
// type that is not a snake_case name or is a built-in category, a risk
// category that is no category (built-in, Fatal rule or fatal error
// type), a name listed twice or in both risk lists.
func (c Config) ruleProblems() []string {
	var bad []string
	known := map[Category]bool{}
	for _, b := range builtinCategories() {
		known[b] = true
	}
	for _, r := range c.Fatal {
		known[r.Name] = true
	}
	seen := map[Category]bool{}
	for _, t := range c.FatalTypes {
		switch {
		case !validName(string(t)):
			bad = append(bad, fmt.Sprintf("fatal_error_types: %q: want a snake_case name", t))
		case t.Builtin():
			bad = append(bad, fmt.Sprintf("fatal_error_types: %q is a built-in category; a failure of it is retried, not fatal", t))
		case seen[t]:
			bad = append(bad, fmt.Sprintf("fatal_error_types: %q is listed twice", t))
		}
		seen[t], known[t] = true, true
	}
	seenAct := map[string]bool{}
	for _, n := range c.DoctorActions {
		var a Action
		switch err := a.UnmarshalText([]byte(n)); {
		case err != nil || !a.Optional():
			bad = append(bad, fmt.Sprintf("doctor_actions: %q is no optional action of the Doctor (want %s)", n, strings.Join(DefaultDoctorActions(), ", ")))
		case seenAct[n]:
			bad = append(bad, fmt.Sprintf("doctor_actions: %q is listed twice", n))
		}
		seenAct[n] = true
	}
	high := map[Category]bool{}
	for _, l := range []struct {
		key  string
		cats []Category
	}{{"high_risk_categories", c.HighRisk}, {"low_risk_categories", c.LowRisk}} {
		seen := map[Category]bool{}
		for _, cat := range l.cats {
			switch {
			case !known[cat]:
				bad = append(bad, fmt.Sprintf("%s: %q is no failure category (want a built-in one such as test_failure, a recovery.fatal name or a fatal error type)", l.key, cat))
			case seen[cat]:
				bad = append(bad, fmt.Sprintf("%s: %q is listed twice", l.key, cat))
			case l.key == "low_risk_categories" && high[cat]:
				bad = append(bad, fmt.Sprintf("%q is in both high_risk_categories and low_risk_categories", cat))
			}
			seen[cat] = true
			if l.key == "high_risk_categories" {
				high[cat] = true
			}
		}
	}
	return bad
}

// HighRiskCategory reports whether cat is one of c's high_risk_categories.
func (c Config) HighRiskCategory(cat Category) bool { return slices.Contains(c.HighRisk, cat) }

// LowRiskCategory reports whether cat is one of c's low_risk_categories.
func (c Config) LowRiskCategory(cat Category) bool { return slices.Contains(c.LowRisk, cat) }

// ActionAllowed reports whether the Doctor may choose a: one of the
// actions every run has, or an optional one c's DoctorActions lists.
func (c Config) ActionAllowed(a Action) bool {
	if !a.Optional() {
		return a != ActionNone
	}
	return slices.Contains(c.DoctorActions, a.String())
}

// IsFatalType reports whether cat is one of c's fatal_error_types.
func (c Config) IsFatalType(cat Category) bool {
	return cat != CatNone && slices.Contains(c.FatalTypes, cat)
}

// inUnit reports whether v is in [0, 1] (NaN is not).
func inUnit(v float64) bool { return v >= 0 && v <= 1 }

// IsFatal reports whether cat is one of the configured fatal categories.
func (c Config) IsFatal(cat Category) bool {
	for _, r := range c.Fatal {
		if r.Name == cat {
			return true
		}
	}
	return false
}

// validName reports whether s is a snake_case name: lower-case letters,
// digits and underscores, starting with a letter, at most 64 bytes.
func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}
