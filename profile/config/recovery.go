package config

import (
	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// leastOf is the least value of a recovery count above 0: a smaller one
// would stop recovery from working rather than bound it.
var leastOf = map[string]struct {
	min int
	why string
}{
	"trigger_threshold": {2, "similarity needs two failures"},
	"max_tail_runes":    {1, "a failure keeps its last runes"},
}

// checkTuning rejects a recovery threshold or budget of a profile's own
// that a run could not use, naming its key: a negative count, a count
// below its least (leastOf), a fraction outside [0, 1].
func (c *Config) checkTuning(at string, t state.RecoveryTuning) error {
	defaults := recovery.Defaults()
	df := defaults.Fields()
	for i, f := range t.Fields() {
		key, path := "recovery."+f.Key, at+".recovery."+f.Key
		switch {
		case f.Int != nil && *f.Int != nil:
			v, def := **f.Int, **df[i].Int
			if v < 0 {
				return c.errAt(path, "%s must not be negative, got %d (0 or more; leave it out for the default %d)", key, v, def)
			}
			if l, ok := leastOf[f.Key]; ok && v < l.min {
				return c.errAt(path, "%s must be at least %d (%s), got %d; leave it out for the default %d", key, l.min, l.why, v, def)
			}
		case f.Frac != nil && *f.Frac != nil:
			if v, def := **f.Frac, **df[i].Frac; !(v >= 0 && v <= 1) {
				return c.errAt(path, "%s must be a fraction from 0 to 1, got %g (leave it out for the default %g)", key, v, def)
			}
		}
	}
	return nil
}

// checkEffectiveTuning rejects what an effective profile's recovery
// settings add up to, when recovery would refuse it at a run's first
// failed attempt: max_failures_kept under trigger_threshold, which one
// profile may set and another (default) the other.
func (c *Config) checkEffectiveTuning(at string, t state.RecoveryTuning) error {
	eff := t.Over(recovery.Defaults())
	if kept, trig := *eff.MaxFailuresKept, *eff.TriggerThreshold; kept < trig {
		key := "max_failures_kept"
		if t.MaxFailuresKept == nil {
			key = "trigger_threshold"
		}
		return c.errAt(at+".recovery."+key, "recovery.max_failures_kept (%d) must be at least recovery.trigger_threshold (%d): the trigger compares that many failures; raise max_failures_kept or lower trigger_threshold", kept, trig)
	}
	if _, err := (recovery.Config{}).Apply(t); err != nil {
		return c.errAt(at+".recovery", "%v", err) // a backstop: checkTuning names the key
	}
	return nil
}
