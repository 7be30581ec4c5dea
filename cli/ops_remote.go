package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/nodes"
	ucli "github.com/urfave/cli/v2"
)

// withOps adds the operations layer to the workflow commands: status,
// list and history run in the process that holds the store when there is
// one; approve, reject and cancel ask it to; run gets --metrics-addr and
// status --watch; serve and submit join the list.
func (a *app) withOps(cmds []*ucli.Command) []*ucli.Command {
	for _, c := range cmds {
		switch c.Name {
		case "run":
			c.Flags = append(c.Flags,
				&ucli.StringFlag{Name: metricsAddrFlag, EnvVars: []string{"GAFFER_METRICS_ADDR"},
					Usage: "serve /metrics, /healthz and /readyz on this address (127.0.0.1 unless it names a host)"},
				&ucli.BoolFlag{Name: "detach", Usage: "queue the run in the gaffer serve process that holds the store (as submit) and return"})
			c.Action = a.runOps(c.Action)
		case "status":
			c.Flags = append(c.Flags,
				&ucli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "redraw the phase tree until the run stops (Ctrl-C to leave)"},
				&ucli.DurationFlag{Name: "interval", Value: time.Second, Usage: "how often --watch redraws"})
			c.Action = a.watchOr(a.remoteRead(c.Action))
		case "list", "history", "diff":
			c.Action = a.remoteRead(c.Action)
		case "approve":
			c.Action = a.remoteAnswer(c.Action, true)
		case "reject":
			c.Action = a.remoteAnswer(c.Action, false)
		case "cancel":
			c.Action = a.remoteCancel(c.Action, opCancel)
		case "resume":
			c.Action = a.remoteCancel(c.Action, opResume)
		}
	}
	return append(cmds, serveCommand(a.io), submitCommand(a.io))
}

// inOwner reports whether the command runs inside the process that holds
// the store (through the socket): then it must not call the socket again.
func (a *app) inOwner() bool { return a.io.ops != nil && a.io.ops.shared != nil }

// remoteRead runs a read-only command in the store's holder when one
// answers, and here otherwise. A holder that is just stopping (its socket
// gone, its store not yet closed) is waited for, briefly.
func (a *app) remoteRead(local ucli.ActionFunc) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if a.inOwner() {
			return local(c)
		}
		cl, err := controlClient(c)
		if err != nil {
			return err
		}
		deadline := time.Now().Add(lockedRetry)
		for {
			done, err := a.tryRemote(c, cl)
			if done {
				return err
			}
			err = local(c)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitLocked || time.Now().After(deadline) {
				return err
			}
			select {
			case <-c.Context.Done():
				return err
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// lockedRetry is how long a read-only command waits for a store whose
// holder does not answer on the socket.
const lockedRetry = 5 * time.Second

// tryRemote runs c in the store's holder; done is false when nobody answers.
func (a *app) tryRemote(c *ucli.Context, cl *control.Client) (done bool, err error) {
	var res execResult
	err = cl.Call(c.Context, opExec, execArgs{Argv: argvOf(c)}, &res)
	if err != nil {
		var re *control.RemoteError
		if errors.As(err, &re) || errors.Is(err, control.ErrStranger) || errors.Is(err, control.ErrUnsafeDir) {
			return true, remoteError(err)
		}
		// Nobody holds the store (or the holder just went away).
		return false, nil
	}
	io.WriteString(a.io.Out, res.Stdout)
	if res.Exit != ExitOK {
		// The holder's Report wrote the message; main reports it again here.
		msg := strings.TrimPrefix(strings.TrimSpace(res.Stderr), "gaffer: ")
		if msg == "" {
			msg = fmt.Sprintf("%s failed in the process that holds the store", c.Command.Name)
		}
		return true, &ExitError{Code: res.Exit, Err: errors.New(msg)}
	}
	io.WriteString(a.io.Err, res.Stderr)
	return true, nil
}

// runOps adds --detach to run, and names serve when it holds the store.
func (a *app) runOps(local ucli.ActionFunc) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if c.Bool("detach") {
			if c.IsSet(metricsAddrFlag) {
				return usageErrorf("--detach and --%s: the serve process serves the metrics", metricsAddrFlag)
			}
			return Submit(c, a.io, RunOptions{
				PlanFile: c.String("plan"), Goal: c.String("goal"), Driver: c.String("driver"), Script: c.String("script"),
				AutoApprove: c.Bool("auto-approve"), AllowDirty: c.Bool("allow-dirty"), Pace: c.Duration("pace"),
				TrackerID: c.String("tracker-id"), RunID: c.String("run-id"), Model: c.String("model"), Profile: c.String("profile"),
			})
		}
		err := local(c)
		var ee *ExitError
		if errors.As(err, &ee) && ee.Code == ExitLocked {
			if cl, cerr := controlClient(c); cerr == nil {
				if info, perr := cl.Ping(c.Context); perr == nil && info.Kind == "serve" {
					return exitf(ExitLocked, "gaffer serve (pid %d) holds the store %s; queue the run there with "+
						"`gaffer run --detach` or `gaffer submit` (same flags)", info.PID, info.Store)
				}
			}
		}
		return err
	}
}

// answerArgs is the approval answer sent to the store's holder.
type answerArgs struct {
	RunID    string `json:"run_id"`
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
}

// answerResult is the holder's reply to answer, cancel and submit.
type answerResult struct {
	RunID   string `json:"run_id"`
	Message string `json:"message"`
}

func (a *app) remoteAnswer(local ucli.ActionFunc, approve bool) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if a.inOwner() {
			return local(c)
		}
		args, err := parseArgs(c)
		if err != nil {
			return err
		}
		return a.forward(c, local, opAnswer, answerArgs{RunID: args.run, Approved: approve, Feedback: args.String("feedback")})
	}
}

// remoteCancel sends op (cancel or resume) for RUN to the store's holder
// when one answers, and runs the command here otherwise.
func (a *app) remoteCancel(local ucli.ActionFunc, op string) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if a.inOwner() {
			return local(c)
		}
		args, err := parseArgs(c)
		if err != nil {
			return err
		}
		return a.forward(c, local, op, runArgs{RunID: args.run})
	}
}

// forward sends op with args to the process holding the store and prints
// its reply; when no process answers on the socket, the command runs here.
func (a *app) forward(c *ucli.Context, local ucli.ActionFunc, op string, args any) error {
	cl, err := controlClient(c)
	if err != nil {
		return err
	}
	var res answerResult
	err = cl.Call(c.Context, op, args, &res)
	if errors.Is(err, control.ErrNoServer) {
		return local(c)
	}
	if err != nil {
		return remoteError(err)
	}
	fmt.Fprintln(a.io.Out, res.Message)
	return nil
}

// argvOf rebuilds the command line of c (without the program name and the
// global flags): the command's name, the flags set before its arguments,
// then the arguments (which hold any flags typed after RUN).
func argvOf(c *ucli.Context) []string {
	argv := []string{c.Command.Name}
	if c.Command.Name == "show" { // plan show
		argv = []string{"plan", "show"}
	}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "watch" || name == "interval" || !c.IsSet(name) {
			continue
		}
		argv = append(argv, fmt.Sprintf("--%s=%v", name, c.Value(name)))
	}
	return append(argv, c.Args().Slice()...)
}

// answerOf is the approval a remote answer stands for.
func answerOf(a answerArgs) nodes.Answer {
	return nodes.Answer{Approved: a.Approved, Feedback: a.Feedback}
}
