package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// ApprovalRequest is the payload of the approval interrupt: what a human
// needs to decide.
type ApprovalRequest struct {
	RunID    string `json:"run_id"`
	Goal     string `json:"goal,omitempty"`
	Plan     string `json:"plan"`
	Mode     string `json:"mode"`
	Phases   int    `json:"phases"`
	Revision int    `json:"revision"`
}

// Answer is the value a run waiting for approval is resumed with.
type Answer struct {
	Approved bool `json:"approved"`
	// Skip answers recovery's question that offers it (Question.OffersSkip:
	// the Doctor proposed skip_phase) by skipping the phase; Approved is
	// then true too.
	Skip     bool   `json:"skip,omitempty"`
	Feedback string `json:"feedback,omitempty"`
}

// architect asks the architect for a plan (revision Progress.PlanRevision)
// and leaves its markdown, unparsed, in Plan.Markdown for the validator.
func (w *workflow) architect(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	d, err := w.driver(agent.RoleArchitect, s.Config)
	if err != nil {
		return s, err
	}
	rep, err := w.session(ctx, d, agent.Session{
		Role: agent.RoleArchitect, RunID: s.Run.ID, Revision: s.Progress.PlanRevision,
		Prompt: ArchitectPrompt(s), Dir: repo.Root(), Tools: agent.DefaultTools(agent.RoleArchitect),
	})
	if err != nil {
		return s, err
	}
	c := w.usage(ctx, s, agent.RoleArchitect, rep.Usage)
	c.Approval = state.Approval{}
	if rep.Status == agent.StatusFailed {
		return w.withStatus(ctx, c.WithError("architect: "+rep.Error), state.RunFailed), nil
	}
	c.Plan = state.Plan{Markdown: agent.ExtractPlan(rep.Output)}
	return c, nil
}

// WholePlanNote is what the plan check says of a plan without task
// headings (state.Plan.Whole).
const WholePlanNote = `the plan has no "### Task <id>: <title>" headings: it runs as one task, the whole plan in one session`

// validator parses and checks Plan.Markdown. A valid plan becomes the
// run's plan (with its phases and a fresh progress). An invalid one goes
// back to the architect with the plan revision one higher, until
// MaxPlanRevisions revisions were refused, when the run fails listing the
// problems. A plan given by the user (--plan) is not sent to the
// architect: the run fails at once.
func (w *workflow) validator(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	plan, err := parse(s)
	if err == nil {
		if plan.Whole {
			w.cfg.Notice(WholePlanNote)
		}
		return w.approvalNotice(s.WithPlan(plan)), nil
	}
	var pe *state.PlanError
	if !errors.As(err, &pe) {
		return s, fmt.Errorf("nodes: validate plan: %w", err)
	}
	rev := s.Progress.PlanRevision
	limit := orDefault(s.Config.Limits.MaxPlanRevisions, state.DefaultMaxPlanRevisions)
	userPlan := s.Config.PlanPath != "" && rev == 0
	msg := fmt.Sprintf("plan revision %d is invalid:\n%s", rev, pe.Error())
	c := s.WithError(msg)
	if userPlan || rev >= limit {
		if !userPlan {
			c = c.WithError(fmt.Sprintf("the plan is still invalid after %d revisions", rev))
		}
		return w.withStatus(ctx, c, state.RunFailed), nil
	}
	c.Progress.PlanRevision++
	c.Plan = state.Plan{Markdown: s.Plan.Markdown}
	return c, nil
}

// parse parses the state's plan markdown with the run's options.
func parse(s state.ExecutionState) (state.Plan, error) {
	var opts []state.ParseOption
	if s.Config.SkipTDDCheck {
		opts = append(opts, state.WithoutTDDCheck())
	}
	opts = append(opts, state.WithMode(s.Config.Mode))
	return state.ParsePlan("plan.md", s.Plan.Markdown, opts...)
}

// planProblems returns the validator's problems with the plan in the
// state, or "" when there is no refused plan: the architect's revision
// prompt re-derives them instead of storing them twice.
func planProblems(s state.ExecutionState) string {
	if s.Plan.Markdown == "" || len(s.Plan.Phases) > 0 {
		return ""
	}
	if _, err := parse(s); err != nil {
		return err.Error()
	}
	return ""
}

// approval asks the human (a graph interrupt) unless the run auto-approves.
// Approved: the first phase is prepared (pre-phase commit and the
// untracked snapshot go into the checkpoint this node's step writes,
// before any agent runs). Rejected with feedback: the architect revises
// the plan. Rejected without: the run ends rejected.
func (w *workflow) approval(ctx context.Context, s state.ExecutionState) (state.ExecutionState, error) {
	ans := Answer{Approved: true}
	if !s.Config.AutoApprove {
		raw, err := graph.Interrupt(ctx, ApprovalRequest{
			RunID: s.Run.ID, Goal: s.Run.Goal, Plan: s.Plan.Markdown, Mode: planMode(s.Plan),
			Phases: len(s.Plan.Phases), Revision: s.Progress.PlanRevision,
		})
		if err != nil {
			var ie *graph.InterruptError
			if errors.As(err, &ie) {
				graph.Emit(ctx, events.EventRunStatus, events.RunStatus{From: state.RunRunning.String(), To: state.RunAwaitingApproval.String()})
			}
			return s, err
		}
		if err := json.Unmarshal(raw, &ans); err != nil {
			return s, fmt.Errorf("%w: %s: %w", ErrBadAnswer, raw, err)
		}
		graph.Emit(ctx, events.EventRunStatus, events.RunStatus{From: state.RunAwaitingApproval.String(), To: state.RunRunning.String()})
	}
	fb := strings.TrimSpace(ans.Feedback)
	switch {
	case ans.Approved:
		c, err := w.stashUserChanges(ctx, s.WithApproval(state.Approval{Decision: state.DecisionApproved, Feedback: fb}))
		if err != nil {
			return s, err
		}
		if c, err = w.writeUserRecord(c, 0, 0, "approved the plan with a remark", fb); err != nil {
			return s, err
		}
		return w.preparePhase(ctx, c, 0)
	case fb != "":
		c, err := w.writeUserRecord(s, 0, 0, "rejected plan revision "+strconv.Itoa(s.Progress.PlanRevision)+" with feedback", fb)
		if err != nil {
			return s, err
		}
		c = c.WithApproval(state.Approval{Decision: state.DecisionRejected, Feedback: fb})
		c.Progress.PlanRevision++
		return c, nil
	}
	c := s.WithApproval(state.Approval{Decision: state.DecisionRejected})
	return w.withStatus(ctx, c, state.RunRejected), nil
}

// usage adds a session's usage to the state and emits agent_usage.
func (w *workflow) usage(ctx context.Context, s state.ExecutionState, role agent.Role, u state.Usage) state.ExecutionState {
	return w.sessionUsage(ctx, s, role, u, 0)
}

// sessionUsage is usage for a session that expanded earlier phases'
// records expansions times (Report.Expansions): the run's count of them
// grows, and agent_usage carries them to the metrics.
func (w *workflow) sessionUsage(ctx context.Context, s state.ExecutionState, role agent.Role, u state.Usage, expansions int) state.ExecutionState {
	model := modelOf(s.Config, role)
	graph.Emit(ctx, events.EventAgentUsage, events.AgentUsage{
		Role: string(role), Model: model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CachedTokens: u.CachedTokens, CostUSD: u.CostUSD, Expansions: max(expansions, 0),
	})
	c := s.WithUsage(string(role), u)
	c.Progress.Story.Expansions += max(expansions, 0)
	return c
}

// modelOf names the model of a role, or its driver when there is no model.
func modelOf(cfg state.RunConfig, role agent.Role) string {
	a := cfg.Agents.Role(string(role))
	if a.Model != "" {
		return a.Model
	}
	if a.Driver != "" {
		return a.Driver
	}
	return "unknown"
}

// withStatus sets the run's status and emits run_status when it changes;
// a change to completed, halted or failed adds its notice to the outbox.
func (w *workflow) withStatus(ctx context.Context, s state.ExecutionState, st state.RunStatus) state.ExecutionState {
	if s.Status == st {
		return s
	}
	graph.Emit(ctx, events.EventRunStatus, events.RunStatus{From: s.Status.String(), To: st.String()})
	return w.statusNotice(s.WithStatus(st), st)
}

// planMode names plan's mode for the human: "task", "phased", or for a
// plan without tasks "task: the whole plan as one task".
func planMode(p state.Plan) string {
	if p.Whole {
		return p.Mode.String() + ": the whole plan as one task"
	}
	return p.Mode.String()
}
