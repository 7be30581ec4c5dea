package state

import "slices"

// RecoveryTuning holds the recovery thresholds and budgets a profile sets
// (gaffer.yaml's recovery section; recovery.Config has the same keys). A
// nil field is not set: it takes recovery's default. A set field is the
// value, 0 included: max_replans_per_run: 0 means no replans, where
// recovery.Config's own zero means the default. The counts are whole
// numbers, the fractions are in [0, 1]; recovery.Config.Apply checks them.
type RecoveryTuning struct {
	// Replan trigger.
	SimilarityThreshold *float64 `json:"similarity_threshold,omitempty" yaml:"similarity_threshold,omitempty"`
	MinMessageLength    *int     `json:"min_message_length,omitempty" yaml:"min_message_length,omitempty"`
	TriggerThreshold    *int     `json:"trigger_threshold,omitempty" yaml:"trigger_threshold,omitempty"`
	MaxReplansPerPhase  *int     `json:"max_replans_per_phase,omitempty" yaml:"max_replans_per_phase,omitempty"`
	MaxReplansPerRun    *int     `json:"max_replans_per_run,omitempty" yaml:"max_replans_per_run,omitempty"`

	// Doctor.
	DoctorMinAttempts      *int     `json:"doctor_min_attempts,omitempty" yaml:"doctor_min_attempts,omitempty"`
	MaxDoctorCallsPerPhase *int     `json:"max_doctor_calls_per_phase,omitempty" yaml:"max_doctor_calls_per_phase,omitempty"`
	MaxDoctorCallsPerRun   *int     `json:"max_doctor_calls_per_run,omitempty" yaml:"max_doctor_calls_per_run,omitempty"`
	MaxDoctorStrongPerRun  *int     `json:"max_doctor_strong_per_run,omitempty" yaml:"max_doctor_strong_per_run,omitempty"`
	MaxDoctorInfraPerRun   *int     `json:"max_doctor_infra_per_run,omitempty" yaml:"max_doctor_infra_per_run,omitempty"`
	MinCheapConfidence     *float64 `json:"min_cheap_confidence,omitempty" yaml:"min_cheap_confidence,omitempty"`
	ComplexAttempts        *int     `json:"complex_attempts,omitempty" yaml:"complex_attempts,omitempty"`
	MaxEscalationsPerPhase *int     `json:"max_escalations_per_phase,omitempty" yaml:"max_escalations_per_phase,omitempty"`

	// Stuck handler.
	ReduceScopeBelow *float64 `json:"reduce_scope_below,omitempty" yaml:"reduce_scope_below,omitempty"`
	EscalateAbove    *float64 `json:"escalate_above,omitempty" yaml:"escalate_above,omitempty"`
	BudgetWarnAt     *float64 `json:"budget_warn_at,omitempty" yaml:"budget_warn_at,omitempty"`

	// Memory bounds.
	MaxFailuresKept *int `json:"max_failures_kept,omitempty" yaml:"max_failures_kept,omitempty"`
	MaxTailRunes    *int `json:"max_tail_runes,omitempty" yaml:"max_tail_runes,omitempty"`
	MaxHintsKept    *int `json:"max_hints_kept,omitempty" yaml:"max_hints_kept,omitempty"`
}

// TuningField is one field of a RecoveryTuning, by its key, for code that
// treats the fields alike (merging, checking, printing). Exactly one of
// Int and Frac is set.
type TuningField struct {
	Key  string    // the snake_case key, as in gaffer.yaml and recovery.Config
	Int  **int     // a count's field
	Frac **float64 // a fraction's field
}

// Fields returns t's fields in the order of the type, as pointers into t.
func (t *RecoveryTuning) Fields() []TuningField {
	return []TuningField{
		{Key: "similarity_threshold", Frac: &t.SimilarityThreshold},
		{Key: "min_message_length", Int: &t.MinMessageLength},
		{Key: "trigger_threshold", Int: &t.TriggerThreshold},
		{Key: "max_replans_per_phase", Int: &t.MaxReplansPerPhase},
		{Key: "max_replans_per_run", Int: &t.MaxReplansPerRun},
		{Key: "doctor_min_attempts", Int: &t.DoctorMinAttempts},
		{Key: "max_doctor_calls_per_phase", Int: &t.MaxDoctorCallsPerPhase},
		{Key: "max_doctor_calls_per_run", Int: &t.MaxDoctorCallsPerRun},
		{Key: "max_doctor_strong_per_run", Int: &t.MaxDoctorStrongPerRun},
		{Key: "max_doctor_infra_per_run", Int: &t.MaxDoctorInfraPerRun},
		{Key: "min_cheap_confidence", Frac: &t.MinCheapConfidence},
		{Key: "complex_attempts", Int: &t.ComplexAttempts},
		{Key: "max_escalations_per_phase", Int: &t.MaxEscalationsPerPhase},
		{Key: "reduce_scope_below", Frac: &t.ReduceScopeBelow},
		{Key: "escalate_above", Frac: &t.EscalateAbove},
		{Key: "budget_warn_at", Frac: &t.BudgetWarnAt},
		{Key: "max_failures_kept", Int: &t.MaxFailuresKept},
		{Key: "max_tail_runes", Int: &t.MaxTailRunes},
		{Key: "max_hints_kept", Int: &t.MaxHintsKept},
	}
}

// Set reports whether f holds a value.
func (f TuningField) Set() bool {
	return f.Int != nil && *f.Int != nil || f.Frac != nil && *f.Frac != nil
}

// Over returns t laid over base: every field t sets replaces base's.
// Neither is changed; the result shares no pointer with them.
func (t RecoveryTuning) Over(base RecoveryTuning) RecoveryTuning {
	out := base.Clone()
	of, tf := out.Fields(), t.Fields()
	for i, f := range tf {
		switch {
		case f.Int != nil && *f.Int != nil:
			v := **f.Int
			*of[i].Int = &v
		case f.Frac != nil && *f.Frac != nil:
			v := **f.Frac
			*of[i].Frac = &v
		}
	}
	return out
}

// Clone returns a copy of t that shares no pointer with it.
func (t RecoveryTuning) Clone() RecoveryTuning {
	for _, f := range t.Fields() {
		switch {
		case f.Int != nil && *f.Int != nil:
			v := **f.Int
			*f.Int = &v
		case f.Frac != nil && *f.Frac != nil:
			v := **f.Frac
			*f.Frac = &v
		}
	}
	return t
}

// IsZero reports whether t sets nothing.
func (t RecoveryTuning) IsZero() bool {
	for _, f := range t.Fields() {
		if f.Set() {
			return false
		}
	}
	return true
}

// RecoveryRules holds the recovery rules of seed 003 a profile sets
// beyond the thresholds and budgets: which failure categories get the
// strong or the cheap Doctor, whether the replan trigger compares
// failure messages, and which error types stop a run at once. A nil
// field takes recovery's default; a list set empty means none.
type RecoveryRules struct {
	HighRiskCategories       *[]string `json:"high_risk_categories,omitempty" yaml:"high_risk_categories,omitempty"`
	LowRiskCategories        *[]string `json:"low_risk_categories,omitempty" yaml:"low_risk_categories,omitempty"`
	MessageSimilarityEnabled *bool     `json:"message_similarity_enabled,omitempty" yaml:"message_similarity_enabled,omitempty"`
	FatalErrorTypes          *[]string `json:"fatal_error_types,omitempty" yaml:"fatal_error_types,omitempty"`
	// DoctorActions lists the Doctor's optional actions the run allows
	// (rollback_provider, ...); nil takes them all, [] none.
	DoctorActions *[]string `json:"doctor_actions,omitempty" yaml:"doctor_actions,omitempty"`
}

// Over returns r laid over base: every field r sets replaces base's.
// Neither is changed; the result shares no pointer with them.
func (r RecoveryRules) Over(base RecoveryRules) RecoveryRules {
	out := base.Clone()
	o := r.Clone()
	if o.HighRiskCategories != nil {
		out.HighRiskCategories = o.HighRiskCategories
	}
	if o.LowRiskCategories != nil {
		out.LowRiskCategories = o.LowRiskCategories
	}
	if o.MessageSimilarityEnabled != nil {
		out.MessageSimilarityEnabled = o.MessageSimilarityEnabled
	}
	if o.FatalErrorTypes != nil {
		out.FatalErrorTypes = o.FatalErrorTypes
	}
	if o.DoctorActions != nil {
		out.DoctorActions = o.DoctorActions
	}
	return out
}

// Clone returns a copy of r that shares no pointer with it.
func (r RecoveryRules) Clone() RecoveryRules {
	list := func(p *[]string) *[]string {
		if p == nil {
			return nil
		}
		l := slices.Clone(*p)
		if l == nil {
			l = []string{}
		}
		return &l
	}
	r.HighRiskCategories = list(r.HighRiskCategories)
	r.LowRiskCategories = list(r.LowRiskCategories)
	r.FatalErrorTypes = list(r.FatalErrorTypes)
	r.DoctorActions = list(r.DoctorActions)
	if r.MessageSimilarityEnabled != nil {
		v := *r.MessageSimilarityEnabled
		r.MessageSimilarityEnabled = &v
	}
	return r
}
