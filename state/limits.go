package state

// Plan limits. ParsePlan refuses a plan over any of them, so that `plan
// validate` and `run` turn it away before anything is written: a plan
// within them, with its tasks and phases, always fits in one checkpoint
// value (the Badger store takes values up to 15 MiB; the plan's JSON is at
// most about twelve times MaxPlanBytes when every byte must be escaped,
// see TestPlanAtTheLimitsFitsACheckpoint).
const (
	// MaxPlanBytes is the largest plan, in bytes of markdown: 1 MiB.
	MaxPlanBytes = 1 << 20
	// MaxTasks is the most tasks a plan may have.
	MaxTasks = 1000
	// MaxTaskBytes is the largest task section (heading to the next
	// heading), in bytes: 64 KiB. A phase's prompt carries its tasks.
	MaxTaskBytes = 64 << 10
)

// planSizeProblem reports a plan over MaxPlanBytes; it is checked before
// the plan is parsed.
func planSizeProblem(markdown string) []Problem {
	if n := len(markdown); n > MaxPlanBytes {
		return []Problem{newProblem(0, nil, "the plan is %d bytes, over the limit of %d (%s); split it into smaller plans",
			n, MaxPlanBytes, "1 MiB")}
	}
	return nil
}

// taskLimitProblems reports a plan with more than MaxTasks tasks (then
// alone: such a plan is not checked further) or tasks over MaxTaskBytes.
func taskLimitProblems(lines []string, tasks []Task) []Problem {
	if n := len(tasks); n > MaxTasks {
		return []Problem{newProblem(0, nil, "the plan has %d tasks, over the limit of %d; split it into smaller plans", n, MaxTasks)}
	}
	var ps []Problem
	for _, t := range tasks {
		n := 0
		for i := t.Line - 1; i < t.EndLine && i < len(lines); i++ {
			n += len(lines[i]) + 1
		}
		if n > MaxTaskBytes {
			ps = append(ps, newProblem(t.Line, []string{t.ID}, "task %s is %d bytes, over the limit of %d (%s); split it into smaller tasks",
				t.ID, n, MaxTaskBytes, "64 KiB"))
		}
	}
	return ps
}
