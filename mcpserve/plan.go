package mcpserve

import (
	"errors"
	"fmt"

	"github.com/gaffer-dev/gaffer/state"
)

// PlanCheck is plan_validate's answer: the plan's phases and tasks, and
// every problem it has.
type PlanCheck struct {
	Valid    bool            `json:"valid"`
	Mode     string          `json:"mode" jsonschema:"phased (typed tasks with dependencies) or task (one task per phase)"`
	Phases   []PlanPhase     `json:"phases"`
	Tasks    []PlanTask      `json:"tasks"`
	Problems []state.Problem `json:"problems" jsonschema:"every problem, each with its line; empty for a valid plan"`
}

// PlanPhase is one phase of a checked plan.
type PlanPhase struct {
	Number int      `json:"number"`
	Tasks  []string `json:"tasks" jsonschema:"the ids of the phase's tasks"`
	// Lanes are the phase's lanes: each a group of its tasks that one
	// fresh agent session does in order; the lanes run at once.
	Lanes [][]string `json:"lanes" jsonschema:"the phase's lanes, each the ids of the tasks one agent session does in order; lanes run at once, up to the run's parallel"`
}

// PlanTask is one task of a checked plan.
type PlanTask struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Type      string   `json:"type" jsonschema:"test, impl, refactor or none"`
	DependsOn []string `json:"depends_on"`
	Files     []string `json:"files"`
	Line      int      `json:"line"`
}

// checkPlan parses and checks text as a plan (state.ParsePlan): a plan
// over state.MaxPlanBytes is one problem, and is not parsed.
func checkPlan(text string, noTDD bool) PlanCheck {
	out := PlanCheck{Phases: []PlanPhase{}, Tasks: []PlanTask{}, Problems: []state.Problem{}}
	if len(text) > state.MaxPlanBytes {
		out.Problems = append(out.Problems, state.Problem{Msg: fmt.Sprintf(
			"the plan is %d bytes, over the limit of %d; split it into smaller plans", len(text), state.MaxPlanBytes)})
		return out
	}
	var opts []state.ParseOption
	if noTDD {
		opts = append(opts, state.WithoutTDDCheck())
	}
	plan, err := state.ParsePlan("plan.md", text, opts...)
	out.Valid, out.Mode = err == nil, plan.Mode.String()
	for i, ph := range plan.Phases {
		lanes := plan.PhaseLanes(i)
		if lanes == nil {
			lanes = [][]string{}
		}
		out.Phases = append(out.Phases, PlanPhase{Number: ph.Number(), Tasks: nonNil(ph.TaskIDs), Lanes: lanes})
	}
	for _, t := range plan.Tasks {
		out.Tasks = append(out.Tasks, PlanTask{ID: t.ID, Title: t.Title, Type: t.Type.String(), Line: t.Line,
			DependsOn: nonNil(t.DependsOn), Files: nonNil(t.Files)})
	}
	var pe *state.PlanError
	switch {
	case errors.As(err, &pe):
		out.Problems = append(out.Problems, pe.Problems...)
	case err != nil:
		out.Problems = append(out.Problems, state.Problem{Msg: err.Error()})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
