package state

import (
	"fmt"
	"strings"
)

// Task returns the task with the given id.
func (p Plan) Task(id string) (Task, bool) {
	for _, t := range p.Tasks {
		if t.ID == id {
			return t.Clone(), true
		}
	}
	return Task{}, false
}

// PhaseTasks returns the tasks of phase i in the phase's order, or
// ErrNoPhase.
func (p Plan) PhaseTasks(i int) ([]Task, error) {
	if i < 0 || i >= len(p.Phases) {
		return nil, fmt.Errorf("%w: index %d of %d", ErrNoPhase, i, len(p.Phases))
	}
	tasks := make([]Task, 0, len(p.Phases[i].TaskIDs))
	for _, id := range p.Phases[i].TaskIDs {
		t, ok := p.Task(id)
		if !ok {
			return nil, fmt.Errorf("%w: phase %d names unknown task %s", ErrInvalidPlan, i+1, id)
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// PhaseContext returns what an agent working on phase i needs from the
// plan: the preamble (goal, context) followed by the markdown sections of
// the phase's tasks as written, in the phase's order. Its size depends on
// the phase, not on how many phases come before it. A plan without
// markdown (built in code) has its sections rendered from the tasks.
func PhaseContext(plan Plan, i int) (string, error) {
	tasks, err := plan.PhaseTasks(i)
	if err != nil {
		return "", err
	}
	return tasksContext(plan, tasks), nil
}

// TasksContext is PhaseContext for some of a phase's tasks (a lane's),
// named by id in the order given; an unknown id is ErrInvalidPlan.
func TasksContext(plan Plan, ids []string) (string, error) {
	tasks := make([]Task, 0, len(ids))
	for _, id := range ids {
		t, ok := plan.Task(id)
		if !ok {
			return "", fmt.Errorf("%w: unknown task %s", ErrInvalidPlan, id)
		}
		tasks = append(tasks, t)
	}
	return tasksContext(plan, tasks), nil
}

func tasksContext(plan Plan, tasks []Task) string {
	var parts []string
	if plan.Preamble != "" {
		parts = append(parts, plan.Preamble)
	}
	lines := strings.Split(plan.Markdown, "\n")
	for _, t := range tasks {
		if plan.Markdown != "" && t.Line >= 1 && t.Line <= t.EndLine && t.EndLine <= len(lines) {
			parts = append(parts, trimBlank(lines[t.Line-1:t.EndLine]))
			continue
		}
		parts = append(parts, RenderTask(t))
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// RenderTask writes t in the plan format: its heading, its type,
// depends-on and files lines, and its description.
func RenderTask(t Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Task %s: %s\n", t.ID, t.Title)
	if t.Type != TypeNone {
		fmt.Fprintf(&b, "- type: %s\n", t.Type)
	}
	if len(t.DependsOn) > 0 {
		fmt.Fprintf(&b, "- depends on: %s\n", strings.Join(t.DependsOn, ", "))
	}
	if len(t.Files) > 0 {
		fmt.Fprintf(&b, "- files: %s\n", strings.Join(t.Files, ", "))
	}
	if t.Description != "" {
		b.WriteString("\n" + t.Description + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
