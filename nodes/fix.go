package nodes

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// fixRun is the Doctor's fix (execute_fix) of a phase, as the recovery
// state keeps it: granted by recover's step (pending), run by the next
// attempt's phased_execution step after its reset and before the
// developer's session (Ran), or found cut off by a crash there
// (Abandoned). Each is checkpointed by its step.
type fixRun struct {
	Phase   int    `json:"phase"`   // index
	Command string `json:"command"` // the Doctor's shell command
	// Decision is the number of the execute_fix decision record that
	// granted it: which grant this process holds (workflow.fixes).
	Decision  int    `json:"decision"`
	Ran       bool   `json:"ran,omitempty"`
	Abandoned bool   `json:"abandoned,omitempty"`
	ExitCode  int    `json:"exit_code,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Output    string `json:"output,omitempty"` // bounded (maxFixOutput), secrets redacted
}

// maxFixOutput bounds the fix's output kept in the state, the decision
// record and the retry's prompt: its first quarter and its end.
const maxFixOutput = 4000

// fixUnavailable says why the Doctor cannot choose execute_fix for phase
// index now; "" when it can.
func (w *workflow) fixUnavailable(s state.ExecutionState, rs recoveryState, index int, cfg recovery.Config) string {
	switch {
	case !cfg.ActionAllowed(recovery.ActionExecuteFix):
		return "this run's doctor_actions leave it out"
	case w.cfg.Commands == nil:
		return "this gaffer runs no commands of the Doctor's"
	}
	if ps, err := s.PhaseState(index); err == nil && ps.Parallel() {
		return fmt.Sprintf("phase %d runs in several lanes, each in a work tree of its own", index+1)
	}
	if ok, why := recovery.FixLeft(rs.Memory, index, cfg); !ok {
		return why
	}
	return ""
}

// grantFix carries out the Doctor's execute_fix: the fix is counted and
// recorded as pending, to run at the start of the phase's next attempt
// (after its reset, which would undo it if it ran now); or refused, and
// recovery goes on as without advice (ok false).
func (w *workflow) grantFix(ctx context.Context, s state.ExecutionState, rs recoveryState, ps state.PhaseState, cfg recovery.Config, adv recovery.Advice) (recoveryState, bool) {
	if why := w.fixUnavailable(s, rs, ps.Index, cfg); why != "" {
		return w.decide(ctx, s, rs, ps, "execute_fix:refused", why), false
	}
	rs.Memory = recovery.GrantFix(rs.Memory, ps.Index)
	rs = w.decide(ctx, s, rs, ps, "execute_fix", fmt.Sprintf("the Doctor: %s; runs before the next attempt: %s", adv.Rationale, adv.Command))
	rs.Fix = &fixRun{Phase: ps.Index, Command: adv.Command, Decision: rs.Decisions}
	w.fixes.Store(s.Run.ID, rs.Decisions)
	return rs, true
}

// runFix runs phase ps's pending fix, if it has one, in the run's tree:
// phased_execution calls it after the fresh session's reset, before the
// developer's session, and its result reaches the state (and the retry's
// prompt) with that step's checkpoint. A pending fix this process did
// not grant was cut off by a crash, before, during or after its command:
// it is not run again (it may have run; the reset undid it) and the
// retry goes on without it. The grant is taken before the command
// starts, so neither a crash nor a step run again runs it twice.
func (w *workflow) runFix(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, error) {
	if len(s.Progress.Recovery) == 0 {
		return s, nil
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return s, err
	}
	f := rs.Fix
	if f == nil || f.Phase != ps.Index || f.Ran || f.Abandoned {
		return s, nil
	}
	if n, ok := w.fixes.LoadAndDelete(s.Run.ID); !ok || n != f.Decision || w.cfg.Commands == nil {
		f.Abandoned = true
		rs = w.decide(ctx, s, rs, ps, "execute_fix:abandoned",
			"a crash cut the run off after the Doctor's fix was granted; it is not run again (if it ran, the reset undid it): "+f.Command)
		return withRecovery(s, rs)
	}
	repo, err := w.repo(s)
	if err != nil {
		return s, err
	}
	res, err := w.cfg.Commands(ctx, s.Config, repo.Root(), f.Command)
	if err != nil {
		if ctx.Err() != nil {
			return s, err
		}
		res.Output, res.ExitCode = strings.TrimSpace(res.Output+"\n"+err.Error()), -1
	}
	f.Ran, f.ExitCode, f.TimedOut, f.Output = true, res.ExitCode, res.TimedOut, boundText(res.Output, maxFixOutput)
	why := fmt.Sprintf("%s: exit %d", f.Command, f.ExitCode)
	if f.TimedOut {
		why += " (timed out)"
	}
	rs = w.decide(ctx, s, rs, ps, "execute_fix:ran", why+"\n"+f.Output)
	return withRecovery(s, rs)
}

// fixPrompt is what phase ps's prompt says of the Doctor's fix: its
// command, exit and output once it ran, or that a crash cut it off.
func fixPrompt(rs recoveryState, ps state.PhaseState) string {
	f := rs.Fix
	if f == nil || f.Phase != ps.Index {
		return ""
	}
	switch {
	case f.Ran:
		status := fmt.Sprintf("exit %d", f.ExitCode)
		if f.TimedOut {
			status = "killed: it ran too long"
		}
		return fmt.Sprintf("\n## The Doctor's fix\n\nBefore this attempt the Doctor ran `%s` in the work tree (%s); its changes are in the tree. Its output:\n\n```\n%s\n```\n", f.Command, status, f.Output)
	case f.Abandoned:
		return fmt.Sprintf("\n## The Doctor's fix\n\nThe Doctor's fix `%s` was cut off by a crash and did not run on this tree.\n", f.Command)
	}
	return ""
}

// boundText is text cut to at most max bytes: its first quarter and its
// last part, with a note of what was left out, on rune boundaries.
func boundText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	head, tail := max/4, max-max/4-64
	for head > 0 && !utf8.RuneStart(text[head]) {
		head--
	}
	start := len(text) - tail
	for start < len(text) && !utf8.RuneStart(text[start]) {
		start++
	}
	return fmt.Sprintf("%s\n[… %d bytes left out …]\n%s", text[:head], start-head, text[start:])
}
