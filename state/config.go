package state

import "fmt"

// Validate returns c with the default limits and parallel filled in, or
// an error wrapping ErrInvalidConfig when a limit, the pace or parallel
// is negative (or parallel over MaxParallel). It does not change c.
func (c RunConfig) Validate() (RunConfig, error) {
	l, err := c.Limits.Validate()
	if err != nil {
		return RunConfig{}, err
	}
	if c.Pace < 0 {
		return RunConfig{}, fmt.Errorf("%w: pace %v is negative", ErrInvalidConfig, c.Pace)
	}
	switch {
	case c.Parallel < 0 || c.Parallel > MaxParallel:
		return RunConfig{}, fmt.Errorf("%w: parallel is %d, want 1 to %d (0 for the default %d)", ErrInvalidConfig, c.Parallel, MaxParallel, DefaultParallel)
	case c.Parallel == 0:
		c.Parallel = DefaultParallel
	}
	c.Limits = l
	return c, nil
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxTaskReviewIterations: DefaultMaxTaskReviewIterations,
		MaxPhaseAttempts:        DefaultMaxPhaseAttempts,
		MaxPlanRevisions:        DefaultMaxPlanRevisions,
	}
}

// Validate returns l with every zero limit set to its default, or an
// error wrapping ErrInvalidConfig naming the first negative limit.
func (l Limits) Validate() (Limits, error) {
	d := DefaultLimits()
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"max_task_review_iterations", &l.MaxTaskReviewIterations, d.MaxTaskReviewIterations},
		{"max_phase_attempts", &l.MaxPhaseAttempts, d.MaxPhaseAttempts},
		{"max_plan_revisions", &l.MaxPlanRevisions, d.MaxPlanRevisions},
	} {
		switch {
		case *f.v < 0:
			return Limits{}, fmt.Errorf("%w: %s is %d, want 1 or more (0 for the default %d)", ErrInvalidConfig, f.name, *f.v, f.def)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	return l, nil
}
