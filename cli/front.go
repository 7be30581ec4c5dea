package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
)

// answerer answers a run's approval request in place of the terminal
// (the demo answers its own).
type answerer func(ctx context.Context, req nodes.ApprovalRequest, s state.ExecutionState) (nodes.Answer, error)

// stateReader reads a run's latest checkpoint (a host).
type stateReader interface {
	State(ctx context.Context, req host.RunRequest) (graph.Snapshot[state.ExecutionState], error)
}

// front is the terminal a command's host works for (host.Front): what
// the host says goes to the output, a driven run's progress is drawn
// there, and a run waiting for approval is asked on the terminal.
type front struct {
	io     IO
	cmd    func(args ...string) string
	ask    answerer // nil: the terminal asks, when there is one
	states interface {
		stateReader
		Subscribe(func(graph.Event)) func()
	}

	mu    sync.Mutex
	p     *progress // the run's progress while one is driven
	lines chan string
	once  sync.Once
}

// Say prints line on the output.
func (f *front) Say(line string) { fmt.Fprintln(f.io.Out, line) }

// Notice prints line on the error output.
func (f *front) Notice(line string) { fmt.Fprintln(f.io.Err, line) }

// Watch draws runID's progress until the returned function is called
// with the outcome: the tree of the run's last state then, or the last
// frame when the run stopped without one.
func (f *front) Watch(runID string) func(host.Outcome) {
	p := newProgress(f.io.Out, f.io.terminal(), f.states, runID)
	stopTick := func() {}
	if f.io.screen != nil && f.io.terminal() {
		p.withLive(f.io.screen, time.Now)
		stopTick = p.tick(time.Second) // the running phase's elapsed time moves between events too
	}
	unsub := f.states.Subscribe(p.event)
	f.mu.Lock()
	f.p = p
	f.mu.Unlock()
	return func(out host.Outcome) {
		if out.State != nil {
			p.tree(context.Background(), *out.State, "")
		} else {
			p.end()
		}
		stopTick()
		unsub()
		f.mu.Lock()
		f.p = nil
		f.mu.Unlock()
	}
}

// Asks reports whether there is someone to ask: the demo's answerer, or
// a terminal.
func (f *front) Asks() bool { return f.ask != nil || f.io.terminal() }

// noticer is the front of serve's runs: nobody watches or answers them,
// and what the host finds and fixes is told on the error output.
type noticer struct {
	host.Quiet
	io IO
}

// Notice prints line on the error output.
func (n noticer) Notice(line string) { fmt.Fprintln(n.io.Err, line) }

// Ask shows the plan and asks approve / reject / feedback on the
// terminal; an answer from another terminal (remote) ends the question.
// Ctrl-C or the end of input leaves the run waiting (host.ErrNotAnswered).
func (f *front) Ask(ctx context.Context, req nodes.ApprovalRequest, s state.ExecutionState, remote <-chan nodes.Answer) (nodes.Answer, error) {
	if f.ask != nil {
		return f.ask(ctx, req, s)
	}
	f.mu.Lock()
	p := f.p
	f.mu.Unlock()
	if p != nil {
		p.pause()
	}
	ans, err := f.askTerminal(ctx, req, s, remote)
	if err == nil && p != nil {
		p.resume()
	}
	return ans, err
}

// read returns a line of the terminal, or an answer given in another
// terminal (approve or reject through the control socket).
func (f *front) read(ctx context.Context, remote <-chan nodes.Answer) (string, *nodes.Answer, bool) {
	f.once.Do(func() {
		f.lines = make(chan string)
		go func() {
			in := bufio.NewReader(f.io.In)
			for {
				l, err := in.ReadString('\n')
				if l != "" || err == nil {
					f.lines <- l
				}
				if err != nil {
					close(f.lines)
					return
				}
			}
		}()
	})
	select {
	case l, ok := <-f.lines:
		return l, nil, ok
	case ans := <-remote:
		fmt.Fprintf(f.io.Out, "\n%s from another terminal\n", host.AnswerVerb(ans))
		return "", &ans, true
	case <-ctx.Done():
		return "", nil, false
	}
}

func (f *front) askTerminal(ctx context.Context, req nodes.ApprovalRequest, s state.ExecutionState, remote <-chan nodes.Answer) (nodes.Answer, error) {
	// The whole plan, paged on a terminal: the human approves what they
	// read, not titles.
	var plan strings.Builder
	writePlanText(&plan, s)
	fmt.Fprintln(f.io.Out)
	if err := f.io.page(plan.String()); err != nil {
		return nodes.Answer{}, err
	}
	fmt.Fprintf(f.io.Out, "\n(The plan again at any time: %s)\n", f.cmd("plan", "show", req.RunID))
	for {
		fmt.Fprint(f.io.Out, "\nApprove this plan? [a]pprove, [r]eject, [f]eedback (reject and replan): ")
		line, ans, ok := f.read(ctx, remote)
		if ans != nil {
			return *ans, nil
		}
		if !ok {
			fmt.Fprintln(f.io.Out)
			if cause := context.Cause(ctx); errors.Is(cause, host.ErrCancelRequested) {
				return nodes.Answer{}, cause
			}
			return nodes.Answer{}, host.ErrNotAnswered
		}
		next := func(ctx context.Context) (string, *nodes.Answer, bool) { return f.read(ctx, remote) }
		if ans, done := approvalAnswer(ctx, f.io.Out, next, line); done {
			return ans, nil
		}
	}
}

// report prints what became of a run the host drove (or handed on) and
// returns the command's exit error for it: completed 0, waiting for a
// human 4, halted, failed or cancelled 5, rejected 6, stopped on an
// error 9, interrupted (a signal, the machine) 1.
func report(io IO, cmd func(...string) string, out host.Outcome, err error) error {
	if err != nil {
		return err
	}
	w := io.Out
	if s := out.State; s != nil && (out.Kind == host.Completed || out.Kind == host.Rejected || out.Kind == host.Halted || out.Kind == host.Cancelled) {
		writeCost(w, *s)
		if n := s.Progress.Story.Expansions; n > 0 {
			fmt.Fprintf(w, "\nStory expansions: %d (earlier phases' Task Story records read in full; %s shows them)\n", n, cmd("story", "show", out.RunID, "--phase", "N"))
		}
		if l := host.UserChangesLine(*s); l != "" {
			fmt.Fprintf(w, "\n%s\n", l)
		}
		if sk := nodes.SkippedPhases(*s); len(sk) > 0 {
			fmt.Fprintf(w, "\nSkipped phases: %s (the Doctor proposed it, the human approved; nothing of them is committed)\n", joinInts(sk))
		}
	}
	if s := out.State; s != nil && (out.Kind == host.Halted || out.Kind == host.Cancelled) && s.Status.Terminal() {
		if l := host.BranchHint(*s, cmd); l != "" {
			fmt.Fprintf(w, "\n%s\n", l)
		}
	}
	switch out.Kind {
	case host.Completed:
		if items := nodes.DeferredItems(*out.State); len(items) > 0 {
			fmt.Fprintf(w, "\nReview items not acted on (each phase's review-feedback.md has them):\n  %s\n", strings.Join(items, "\n  "))
		}
		fmt.Fprintf(w, "\nRun %s completed. Execution directory: %s\n", out.RunID, out.State.Run.ExecDir)
		if l := host.BranchHint(*out.State, cmd); l != "" {
			fmt.Fprintln(w, l)
		}
		return nil
	case host.HandedOn:
		fmt.Fprintln(w, out.Message)
		for _, n := range out.Notes {
			fmt.Fprintln(w, n)
		}
		return nil
	case host.Parked:
		fmt.Fprintf(w, "\nRun %s is waiting for approval of its plan.\n  read it: %s\n  approve: %s\n  reject:  %s\n",
			out.RunID, cmd("plan", "show", out.RunID), cmd("approve", out.RunID), cmd("reject", out.RunID, `--feedback "…"`))
		return exitf(ExitAwaitingApproval, "run %s is waiting for approval", out.RunID)
	case host.Asking:
		writeQuestion(w, cmd, out.RunID, out.Question)
		return exitf(ExitAwaitingApproval, "%s", out.Message)
	case host.Rejected:
		return exitf(ExitRejected, "%s", out.Message)
	case host.Halted, host.Cancelled:
		return exitf(ExitHalted, "%s", out.Message)
	case host.Stopped:
		return &ExitError{Code: ExitStopped, Err: outcomeErr(out)}
	}
	return &ExitError{Code: ExitFailure, Err: outcomeErr(out)}
}

func outcomeErr(out host.Outcome) error {
	if out.Err != nil {
		return out.Err
	}
	return errors.New(out.Message)
}

// writeQuestion prints what recovery asks the human (a reduce-scope
// proposal, a needs-human diagnosis, a narrowing revision it refused) and
// how to answer.
func writeQuestion(w interface{ Write([]byte) (int, error) }, cmd func(...string) string, runID string, q *nodes.Question) {
	if q == nil {
		return
	}
	fmt.Fprintf(w, "\nRun %s needs a human: phase %d, attempt %d: %s\n  why: %s\n", runID, q.Phase, q.Attempt, q.Decision, q.Why)
	if q.Lane != "" {
		fmt.Fprintf(w, "  failing lane: %s (the phase's other lanes keep their work)\n", q.Lane)
	}
	for _, p := range q.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	if q.Diagnosis != "" {
		fmt.Fprintf(w, "  last failure: %s\n", q.Diagnosis)
	}
	fmt.Fprintf(w, "  another attempt: %s\n  stop the run:    %s\n",
		cmd("approve", runID, "--decision", "retry", `--feedback "…"`), cmd("approve", runID, "--decision", "stop"))
	if q.OffersSkip() {
		fmt.Fprintf(w, "  skip the phase:  %s\n", cmd("approve", runID, "--decision", "skip"))
	}
}

// joinInts joins ns with ", ": "2, 4".
func joinInts(ns []int) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strconv.Itoa(n)
	}
	return strings.Join(out, ", ")
}
