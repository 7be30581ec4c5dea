package cli

import (
	"context"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

func approveCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "approve",
		Usage:        "approve a run's plan and continue the run here",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags: localGlobals(&ucli.StringFlag{Name: "feedback", EnvVars: []string{"GAFFER_FEEDBACK"}, Usage: "notes kept with the approval"},
			&ucli.StringFlag{Name: "decision", EnvVars: []string{"GAFFER_DECISION"}, Usage: "answer recovery's question: retry (another attempt, --feedback as its guidance) or stop"},
			paceFlag()),
		Action: withRun(io, func(ctx context.Context, e *env, a cmdArgs) error {
			ans := nodes.Answer{Approved: true, Feedback: a.String("feedback")}
			switch a.String("decision") {
			case "", "retry":
			case "stop":
				ans.Approved = false
			default:
				return usageErrorf("--decision %q: want retry or stop", a.String("decision"))
			}
			if a.String("decision") != "" {
				return AnswerQuestion(ctx, e, a.run, ans)
			}
			return Answer(ctx, e, a.run, ans)
		}),
	}
}

func rejectCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "reject",
		Usage:        "reject a run's plan: with --feedback the architect replans, without it the run ends",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags:        localGlobals(&ucli.StringFlag{Name: "feedback", EnvVars: []string{"GAFFER_FEEDBACK"}, Usage: "what the architect should change"}),
		Action: withRun(io, func(ctx context.Context, e *env, a cmdArgs) error {
			return Answer(ctx, e, a.run, nodes.Answer{Feedback: a.String("feedback")})
		}),
	}
}

// AnswerQuestion answers recovery's question a run waits for (--decision)
// and continues the run in this process; a run waiting for its plan's
// approval is refused.
func AnswerQuestion(ctx context.Context, e *env, runID string, ans nodes.Answer) error {
	id, err := e.pick(ctx, runID, "waiting for approval", func(s state.RunStatus) bool { return s == state.RunAwaitingApproval })
	if err != nil {
		return err
	}
	snap, err := e.runner.State(ctx, id)
	if err != nil {
		return e.runError(ctx, id, err)
	}
	switch {
	case snap.State.Status.Terminal():
		return e.runError(ctx, id, graph.ErrRunDone)
	case snap.Interrupt == nil:
		return e.runError(ctx, id, graph.ErrNotInterrupted)
	case snap.Interrupt.Node != nodes.NodeRecover:
		return exitf(ExitUsage, "run %s waits for its plan's approval, not for recovery's question: approve or reject it without --decision", id)
	}
	if err := e.checkCommits(ctx, snap); err != nil {
		return err
	}
	return e.drive(ctx, id, nil, func() (graphResult, error) {
		return e.runner.Resume(ctx, id, graph.WithResume(ans))
	})
}

// Answer answers the approval a run waits for (the newest waiting run when
// runID is "") and continues the run in this process.
func Answer(ctx context.Context, e *env, runID string, ans nodes.Answer) error {
	id, err := e.pick(ctx, runID, "waiting for approval", func(s state.RunStatus) bool { return s == state.RunAwaitingApproval })
	if err != nil {
		return err
	}
	if snap, err := e.runner.State(ctx, id); err == nil {
		if err := e.checkCommits(ctx, snap); err != nil {
			return err
		}
		if ans.Approved || ans.Feedback != "" {
			if err := checkKeys(snap.State.Config, e.io.Keys.getenv); err != nil { // before the answer is used up
				return err
			}
		}
	}
	var ask answerer
	if e.io.terminal() {
		ask = e.askTerminal()
	}
	return e.drive(ctx, id, ask, func() (graphResult, error) {
		return e.runner.Resume(ctx, id, graph.WithResume(ans))
	})
}
