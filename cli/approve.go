package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
)

func approveCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "approve",
		Usage:        "approve a run's plan and continue the run here",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags: localGlobals(&ucli.StringFlag{Name: "feedback", EnvVars: []string{"GAFFER_FEEDBACK"}, Usage: "notes kept with the approval"},
			&ucli.StringFlag{Name: "decision", EnvVars: []string{"GAFFER_DECISION"}, Usage: "answer recovery's question: retry (another attempt, --feedback as its guidance), stop, or skip (the phase, where the Doctor proposed it)"},
			paceFlag()),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			req := host.AnswerRequest{RunID: a.run, Verdict: host.Approve, Feedback: a.String("feedback")}
			if d := a.String("decision"); d != "" {
				v, err := host.ParseVerdict(d)
				if err != nil || !v.Decides() {
					return usageErrorf("--decision %q: want retry, stop or skip", d)
				}
				req.Verdict = v
			}
			return answer(c, io, req)
		},
	}
}

func rejectCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "reject",
		Usage:        "reject a run's plan: with --feedback the architect replans, without it the run ends",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags:        localGlobals(&ucli.StringFlag{Name: "feedback", EnvVars: []string{"GAFFER_FEEDBACK"}, Usage: "what the architect should change"}),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c)
			if err != nil {
				return err
			}
			return answer(c, io, host.AnswerRequest{RunID: a.run, Verdict: host.Reject, Feedback: a.String("feedback")})
		},
	}
}

// answer gives the run's host the answer: the process holding the store
// continues the run, or this one does.
func answer(c *ucli.Context, io IO, req host.AnswerRequest) error {
	return withService(c, io, false, func(svc host.Service, cmd func(...string) string) error {
		out, err := svc.Answer(c.Context, req)
		return report(io, cmd, out, err)
	})
}
