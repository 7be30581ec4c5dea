package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/changes"
	"github.com/gaffer-dev/gaffer/agent/internal/label"
	"github.com/gaffer-dev/gaffer/agent/internal/short"
	"github.com/gaffer-dev/gaffer/internal/ioerr"
	"github.com/gaffer-dev/gaffer/state"
)

// Options configures a Driver. The zero value is ready to use.
type Options struct {
	// Pace is slept before each action and before each session's answer, so
	// that someone watching can follow. The sleep ends early when the ctx
	// given to Run is done.
	Pace time.Duration
	// Stdout, when set, gets a line per action and the output of commands
	// as they run.
	Stdout io.Writer
	// RunIDs, set, names the session's run at the start of each Stdout
	// line ("[r-1 developer p1 a1 i1] …"), for an output that several runs
	// share (serve's log).
	RunIDs bool
	// CommandTimeout bounds each run action; 0 means DefaultCommandTimeout.
	CommandTimeout time.Duration
	// MaxOutput is how much of a command's output is kept; 0 means
	// DefaultMaxOutput.
	MaxOutput int
	// Env is the environment commands start from; nil means the process's
	// own. Secrets are removed from it either way (see Toolbox.Run).
	Env []string
	// Groups records each command's process group (see GroupRecorder).
	Groups agent.GroupRecorder
	// Warn is told when commands run unconfined (see ToolboxOptions.Warn).
	Warn func(msg string)
}

// Driver is the deterministic Driver: it plays back a Script, doing the
// file and command work of developer sessions for real in Session.Dir, and
// answering architect, reviewer and evaluator sessions with the scripted
// plan, review and evaluation. The same session always gets the same
// answer, so a resumed run replays exactly. It is safe for concurrent use.
type Driver struct {
	script *Script
	opts   Options
}

var _ agent.Driver = (*Driver)(nil)

// NewDriver returns a driver that plays back s; a nil s is an empty
// script, which gives every session its default answer.
func NewDriver(s *Script, opts Options) *Driver {
	if s == nil {
		s = &Script{}
	}
	opts.Pace = max(opts.Pace, 0)
	return &Driver{script: s, opts: opts}
}

// Run plays back the script's entry for session s.
//
// The architect gets entry number s.Revision of the architect list, or the
// last entry when the list is shorter; an empty list is ErrNotScripted. For
// the other roles the entry is chosen by Match: among the entries whose
// given fields (phase, attempt, iteration) all equal the session's, the one
// giving the most fields wins, and the first in the file breaks a tie. When
// no entry matches, a developer session completes without doing anything,
// a reviewer approves with the comment "LGTM", and an evaluator is
// ErrNotScripted.
//
// A developer session runs its actions in order and stops at the first that
// fails (a refused path, an edit that does not apply, a command that exits
// non-zero without allow_failure); the report is then failed with the
// reason, and command output, in Error. A ctx that ends stops the session
// (killing a running command) and Run returns an error wrapping ctx.Err().
func (d *Driver) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	if err := ctx.Err(); err != nil {
		return agent.Report{}, d.cancelled(s, err)
	}
	switch s.Role {
	case agent.RoleArchitect:
		return d.architect(ctx, s)
	case agent.RoleDeveloper:
		return d.developer(ctx, s)
	case agent.RoleReviewer:
		return d.reviewer(ctx, s)
	case agent.RoleEvaluator:
		return d.evaluator(ctx, s)
	case agent.RoleSummarizer:
		return d.summarizer(ctx, s)
	case agent.RoleDoctor:
		st, ok := pickDoctor(d.script.Doctor, s)
		if !ok {
			return agent.Report{}, fmt.Errorf("%w: no doctor entry matches phase %d, attempt %d, tier %s", ErrNotScripted, s.Phase, s.Attempt, s.Tier)
		}
		return d.answer(ctx, s, st.Answer, st.Error, st.Usage)
	case agent.RoleReplanner:
		st, ok := pick(d.script.Replanner, s)
		if !ok {
			return agent.Report{}, fmt.Errorf("%w: no replanner entry matches phase %d, attempt %d", ErrNotScripted, s.Phase, s.Attempt)
		}
		return d.answer(ctx, s, st.Answer, st.Error, st.Usage)
	}
	return agent.Report{}, fmt.Errorf("%w %q", agent.ErrUnknownRole, s.Role)
}

func (d *Driver) architect(ctx context.Context, s agent.Session) (agent.Report, error) {
	steps := d.script.Architect
	if len(steps) == 0 {
		return agent.Report{}, fmt.Errorf("%w: the script has no plan for the architect", ErrNotScripted)
	}
	st := steps[min(max(s.Revision, 0), len(steps)-1)]
	if err := d.pause(ctx, s); err != nil {
		return agent.Report{}, err
	}
	rep := agent.Report{SessionID: sessionID(s), Usage: st.Usage}
	if st.Error != "" {
		rep.Status, rep.Error, rep.Summary = agent.StatusFailed, st.Error, "the architect failed"
		d.finish(s, rep, st.Error)
		return rep, nil
	}
	plan := st.Plan
	if st.PlanFile != "" {
		var err error
		if plan, err = d.script.readFile(st.PlanFile); err != nil {
			return agent.Report{}, err
		}
	}
	rep.Status, rep.Output = agent.StatusCompleted, plan
	rep.Summary = st.Summary
	if rep.Summary == "" {
		rep.Summary = fmt.Sprintf("plan revision %d: %s", s.Revision, short.FirstLine(plan))
	}
	d.say(s, "plan: %s", short.FirstLine(plan))
	d.finish(s, rep, plan)
	return rep, nil
}

func (d *Driver) reviewer(ctx context.Context, s agent.Session) (agent.Report, error) {
	review := agent.Review{Approved: true, Comments: "LGTM"}
	var usage state.Usage
	// A session with a revision is recovery's second opinion on a
	// replan's revision: only second_opinion entries answer it, and
	// only they answer it.
	steps := slices.DeleteFunc(slices.Clone(d.script.Reviewer), func(st ReviewerStep) bool { return st.SecondOpinion != (s.Revision > 0) })
	if st, ok := pick(steps, s); ok {
		if err := checkItems(st.Items, false); err != nil {
			return agent.Report{}, d.invalid(st.line, "reviewer entry for %s: %v", st.Match, err)
		}
		review = agent.Review{Approved: st.Approved, Comments: st.Comments, Items: normalise(st.Items), Tasks: st.Tasks}
		usage = st.Usage
	}
	if err := d.pause(ctx, s); err != nil {
		return agent.Report{}, err
	}
	rep := agent.Report{Status: agent.StatusCompleted, Output: review.JSON(), SessionID: sessionID(s), Usage: usage}
	if review.Approved {
		rep.Summary = "approved"
	} else {
		rep.Summary = "changes requested"
	}
	if review.Comments != "" {
		rep.Summary += ": " + short.FirstLine(review.Comments)
	}
	d.say(s, "%s", rep.Summary)
	d.finish(s, rep, rep.Output)
	return rep, nil
}

func (d *Driver) evaluator(ctx context.Context, s agent.Session) (agent.Report, error) {
	st, ok := pick(d.script.Evaluator, s)
	if !ok {
		return agent.Report{}, fmt.Errorf("%w: no evaluator entry matches phase %d, attempt %d, iteration %d",
			ErrNotScripted, s.Phase, s.Attempt, s.Iteration)
	}
	if err := checkItems(st.Items, true); err != nil {
		return agent.Report{}, d.invalid(st.line, "evaluator entry for %s: %v", st.Match, err)
	}
	if err := d.pause(ctx, s); err != nil {
		return agent.Report{}, err
	}
	ev := agent.Evaluation{Items: normalise(st.Items)}
	counts := map[agent.Disposition]int{}
	for _, it := range ev.Items {
		counts[it.Disposition]++
	}
	rep := agent.Report{
		Status: agent.StatusCompleted, Output: ev.JSON(), SessionID: sessionID(s), Usage: st.Usage,
		Summary: fmt.Sprintf("%d to implement, %d rejected, %d deferred",
			counts[agent.DispositionImplement], counts[agent.DispositionReject], counts[agent.DispositionDefer]),
	}
	d.say(s, "%s", rep.Summary)
	d.finish(s, rep, rep.Output)
	return rep, nil
}

func (d *Driver) summarizer(ctx context.Context, s agent.Session) (agent.Report, error) {
	st, ok := pick(d.script.Summarizer, s)
	if !ok {
		return agent.Report{}, fmt.Errorf("%w: no summarizer entry matches phase %d", ErrNotScripted, s.Phase)
	}
	if err := d.pause(ctx, s); err != nil {
		return agent.Report{}, err
	}
	rep := agent.Report{Status: agent.StatusCompleted, Output: st.Text, SessionID: sessionID(s), Usage: st.Usage, Summary: short.FirstLine(st.Text)}
	if st.Error != "" {
		rep.Status, rep.Error, rep.Output, rep.Summary = agent.StatusFailed, st.Error, "", "the summarizer failed"
	}
	d.finish(s, rep, rep.Output)
	return rep, nil
}

// answer plays back a session whose whole result is its final text (the
// Doctor's, the replanner's): text, or a failure with errText.
func (d *Driver) answer(ctx context.Context, s agent.Session, text, errText string, u state.Usage) (agent.Report, error) {
	if err := d.pause(ctx, s); err != nil {
		return agent.Report{}, err
	}
	rep := agent.Report{Status: agent.StatusCompleted, Output: text, SessionID: sessionID(s), Usage: u, Summary: short.FirstLine(text)}
	if errText != "" {
		rep.Status, rep.Error, rep.Output, rep.Summary = agent.StatusFailed, errText, "", "the "+string(s.Role)+" failed"
	}
	d.say(s, "%s", rep.Summary)
	d.finish(s, rep, rep.Output)
	return rep, nil
}

// pickDoctor returns the Doctor entry for s: among the entries of s's
// tier or of none, the one giving the most keys (a tier counts as one),
// the first on a tie.
func pickDoctor(steps []DoctorStep, s agent.Session) (DoctorStep, bool) {
	best, bestScore := -1, -1
	for i, st := range steps {
		if st.Tier != "" && st.Tier != s.Tier {
			continue
		}
		score, ok := st.Match.score(s)
		if st.Tier != "" {
			score++
		}
		if ok && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return DoctorStep{}, false
	}
	return steps[best], true
}

func (d *Driver) developer(ctx context.Context, s agent.Session) (agent.Report, error) {
	st, found := pick(d.script.Developer, s)
	if !found {
		st = DeveloperStep{Summary: "Nothing was scripted for this session; no changes made."}
	}
	if st.Result != "" && st.Result != agent.StatusCompleted && st.Result != agent.StatusFailed {
		return agent.Report{}, d.invalid(st.line, "developer entry for %s: result %q is not completed or failed", st.Match, st.Result)
	}
	if st.DriverError != "" {
		return agent.Report{Usage: st.Usage}, fmt.Errorf("%w: %s", agent.ErrModel, st.DriverError)
	}
	tb, err := agent.NewToolbox(s.Dir, agent.ToolboxOptions{CommandTimeout: d.opts.CommandTimeout, MaxOutput: d.opts.MaxOutput,
		Env: d.opts.Env, Groups: d.opts.Groups, Warn: d.opts.Warn})
	if err != nil {
		return agent.Report{}, err
	}
	defer tb.Close()
	rep := agent.Report{Status: agent.StatusCompleted, SessionID: sessionID(s), Usage: st.Usage}
	var changed changes.Set
	stopped := func(err error) (agent.Report, error) {
		rep.Status, rep.Error, rep.FilesChanged = agent.StatusFailed, err.Error(), changed.List()
		return rep, err
	}
	for i, a := range st.Actions {
		if err := d.pause(ctx, s); err != nil {
			return stopped(err)
		}
		if a.ExpandContext != 0 {
			rep.Expansions++
		}
		failure, err := d.act(ctx, s, tb, a, &changed)
		rep.FilesChanged = changed.List()
		if err != nil {
			return stopped(err)
		}
		if failure != "" {
			rep.Status = agent.StatusFailed
			rep.Error = fmt.Sprintf("action %d of %d failed: %s", i+1, len(st.Actions), failure)
			rep.Summary = fmt.Sprintf("failed at action %d of %d", i+1, len(st.Actions))
			d.finish(s, rep, rep.Error)
			return rep, nil
		}
	}
	if err := d.pause(ctx, s); err != nil {
		return stopped(err)
	}
	rep.Summary = st.Summary
	if rep.Summary == "" {
		rep.Summary = fmt.Sprintf("ran %d scripted actions", len(st.Actions))
	}
	if st.Result == agent.StatusFailed || st.Error != "" {
		rep.Status, rep.Error = agent.StatusFailed, st.Error
		if rep.Error == "" {
			rep.Error = "the script marks this session as failed"
		}
	}
	rep.Output = rep.Summary
	rep.Story = st.Facts
	d.say(s, "%s: %s", rep.Status, rep.Summary)
	d.finish(s, rep, rep.Summary)
	return rep, nil
}

// act carries out one action. A failure is returned as text for the report;
// the error is for a ctx that ended or a broken script.
func (d *Driver) act(ctx context.Context, s agent.Session, tb *agent.Toolbox, a Action, changed *changes.Set) (failure string, err error) {
	kind, arg, tool := a.kind()
	if kind == "" {
		return "", d.invalid(a.line, "an action needs exactly one of write, edit, delete, mkdir, run, expand_context and wait")
	}
	d.say(s, "%s %s", kind, arg)
	s.Emit(agent.Message{Kind: agent.ToolCall, Tool: kind, Input: arg, Text: kind + " " + arg})
	result := func(text string, isErr bool) {
		s.Emit(agent.Message{Kind: agent.ToolResult, Tool: kind, Text: text, IsError: isErr})
	}
	if tool != "" && !s.Allows(tool) {
		msg := (&agent.ToolError{Op: kind, Path: arg, Err: fmt.Errorf("%w: it needs the %q tool", agent.ErrToolNotAllowed, tool)}).Error()
		result(msg, true)
		return msg, nil
	}
	var toolErr error
	switch kind {
	case "write":
		content := a.Write.Content
		if a.Write.ContentFile != "" {
			if content, err = d.script.readFile(a.Write.ContentFile); err != nil {
				return "", err
			}
		}
		if toolErr = tb.Write(a.Write.Path, content); toolErr == nil {
			changed.Add(a.Write.Path)
			result(fmt.Sprintf("wrote %d bytes to %s", len(content), arg), false)
		}
	case "edit":
		if toolErr = tb.Edit(a.Edit.Path, a.Edit.Old, a.Edit.New); toolErr == nil {
			changed.Add(a.Edit.Path)
			result("edited "+arg, false)
		}
	case "delete":
		if toolErr = tb.Delete(a.Delete); toolErr == nil {
			changed.Add(a.Delete)
			result("deleted "+arg, false)
		}
	case "mkdir":
		if toolErr = tb.Mkdir(a.Mkdir); toolErr == nil {
			result("made "+arg, false)
		}
	case "run":
		return d.run(ctx, s, tb, a)
	case "wait":
		wait, err := time.ParseDuration(a.Wait)
		if err != nil || wait < 0 {
			return "", d.invalid(a.line, "wait %q is not a duration such as 2s or 500ms", a.Wait)
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return "", d.cancelled(s, ctx.Err())
		case <-t.C:
		}
		result("waited "+arg, false)
	case "expand_context":
		text, err := agent.ExpandContext(tb, s.StoryDir, a.ExpandContext, "")
		if err != nil {
			toolErr = err
			break
		}
		d.say(s, "%s", strings.TrimRight(text, "\n"))
		result(text, false)
	}
	if toolErr != nil {
		result(toolErr.Error(), true)
		if ioerr.Machine(toolErr) {
			// The machine's disk failed this driver's own write (ENOSPC,
			// EIO, …): the session could not run, it did not fail.
			return "", toolErr
		}
		return toolErr.Error(), nil
	}
	return "", nil
}

// run carries out a run action.
func (d *Driver) run(ctx context.Context, s agent.Session, tb *agent.Toolbox, a Action) (failure string, err error) {
	res, err := tb.Run(ctx, a.Run, d.opts.Stdout)
	if err != nil {
		if ctx.Err() != nil {
			return "", d.cancelled(s, ctx.Err())
		}
		if errors.Is(err, agent.ErrProcessGroup) {
			// gaffer could not start the command safely: the session
			// could not run, it did not fail.
			s.Emit(agent.Message{Kind: agent.ToolResult, Tool: "run", Text: err.Error(), IsError: true})
			return "", err
		}
		msg := err.Error()
		s.Emit(agent.Message{Kind: agent.ToolResult, Tool: "run", Text: msg, IsError: true})
		return msg, nil
	}
	var status string
	switch {
	case res.TimedOut:
		status = "timed out"
	case res.ExitCode != 0:
		status = fmt.Sprintf("exited with code %d", res.ExitCode)
	default:
		status = "succeeded"
	}
	s.Emit(agent.Message{Kind: agent.ToolResult, Tool: "run", Text: fmt.Sprintf("%s\n%s", status, res.Output), IsError: res.Failed()})
	if !res.Failed() {
		return "", nil
	}
	if a.AllowFailure {
		d.say(s, "%s (allowed)", status)
		return "", nil
	}
	return fmt.Sprintf("command %q %s:\n%s", a.Run, status, res.Output), nil
}

// pause sleeps for the pace, or until ctx is done.
func (d *Driver) pause(ctx context.Context, s agent.Session) error {
	if d.opts.Pace <= 0 {
		if err := ctx.Err(); err != nil {
			return d.cancelled(s, err)
		}
		return nil
	}
	t := time.NewTimer(d.opts.Pace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return d.cancelled(s, ctx.Err())
	case <-t.C:
		return nil
	}
}

// cancelled wraps the error of a ctx that ended.
func (d *Driver) cancelled(s agent.Session, err error) error {
	return fmt.Errorf("agent: script %s session stopped: %w", s.Role, err)
}

// invalid reports a script that cannot be played (one built in Go, as
// loaded ones are checked).
func (d *Driver) invalid(line int, format string, args ...any) error {
	return &Error{File: d.script.displayName(), Line: line, Err: fmt.Errorf(format, args...)}
}

// say writes a progress line to Stdout.
func (d *Driver) say(s agent.Session, format string, args ...any) {
	if d.opts.Stdout == nil {
		return
	}
	l := label.Of(s)
	if s.Model != "" { // an escalation or the Doctor's tier shows
		l += " " + s.Model
	}
	if d.opts.RunIDs && s.RunID != "" {
		l = s.RunID + " " + l
	}
	fmt.Fprintf(d.opts.Stdout, "[%s] %s\n", l, fmt.Sprintf(format, args...))
}

// finish streams a session's final text and usage.
func (d *Driver) finish(s agent.Session, rep agent.Report, text string) {
	if text != "" {
		s.Emit(agent.Message{Kind: agent.Text, Text: text})
	}
	if !rep.Usage.IsZero() {
		s.Emit(agent.Message{Kind: agent.UsageUpdate, Usage: rep.Usage})
	}
}

// pick returns the entry for s: the matching entry that gives the most
// match fields, the first one on a tie.
func pick[T DeveloperStep | ReviewerStep | EvaluatorStep | SummarizerStep | ReplannerStep](steps []T, s agent.Session) (T, bool) {
	best, bestScore := -1, -1
	for i := range steps {
		m := matchOf(&steps[i])
		if score, ok := m.score(s); ok && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		var zero T
		return zero, false
	}
	return steps[best], true
}

// matchOf returns a step's Match.
func matchOf(step any) Match {
	switch st := step.(type) {
	case *DeveloperStep:
		return st.Match
	case *ReviewerStep:
		return st.Match
	case *EvaluatorStep:
		return st.Match
	case *SummarizerStep:
		return st.Match
	case *ReplannerStep:
		return st.Match
	}
	return Match{}
}

// sessionID returns the session to report: the one given, or a
// deterministic new one.
func sessionID(s agent.Session) string {
	if s.SessionID != "" {
		return s.SessionID
	}
	switch s.Role {
	case agent.RoleArchitect:
		return fmt.Sprintf("script-%s-architect-r%d", s.RunID, s.Revision)
	case agent.RoleDeveloper:
		if s.Lane > 0 {
			return fmt.Sprintf("script-%s-p%d-l%d-a%d", s.RunID, s.Phase, s.Lane, s.Attempt)
		}
		return fmt.Sprintf("script-%s-p%d-a%d", s.RunID, s.Phase, s.Attempt)
	}
	return fmt.Sprintf("script-%s-%s-p%d-a%d-i%d", s.RunID, s.Role, s.Phase, s.Attempt, s.Iteration)
}

// normalise returns items with their dispositions in upper case.
func normalise(items []agent.ReviewItem) []agent.ReviewItem {
	out := make([]agent.ReviewItem, len(items))
	for i, it := range items {
		d, _ := agent.ParseDisposition(string(it.Disposition))
		it.Disposition = d
		out[i] = it
	}
	return out
}
