package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	ucli "github.com/urfave/cli/v2"
)

// WatchView is a run as `status --watch` draws it (and prints it, one JSON
// object per change, with --json): seed 002's phase tree with durations,
// attempts, review iterations and tokens.
type WatchView struct {
	RunID           string       `json:"run_id"`
	Status          string       `json:"status"`
	Goal            string       `json:"goal"`
	Checkpoint      uint64       `json:"checkpoint"`
	Next            []string     `json:"next,omitempty"`
	CurrentPhase    int          `json:"current_phase,omitempty"` // 1-based
	ReviewIteration int          `json:"review_iteration"`        // of the current phase's attempt
	Phases          []WatchPhase `json:"phases,omitempty"`
	Usage           state.Usage  `json:"usage"` // all roles
	Errors          []string     `json:"errors,omitempty"`
}

// WatchPhase is one phase of a WatchView.
type WatchPhase struct {
	Number          int         `json:"number"`
	Status          string      `json:"status"`
	Attempt         int         `json:"attempt"`
	DurationSeconds float64     `json:"duration_seconds"` // so far, while it runs
	ReviewIteration int         `json:"review_iteration,omitempty"`
	Commit          string      `json:"commit,omitempty"`
	Tasks           []WatchTask `json:"tasks"`
}

// WatchTask is one task of a WatchPhase.
type WatchTask struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Type   string `json:"type,omitempty"`
	Status string `json:"status"`
}

// watchViewOf reads the run's latest checkpoint (the newest run for "").
func watchViewOf(ctx context.Context, e *env, runID string) (WatchView, error) {
	id, err := e.pick(ctx, runID, "at all", func(state.RunStatus) bool { return true })
	if err != nil {
		return WatchView{}, err
	}
	snap, err := e.runner.State(ctx, id)
	if err != nil {
		return WatchView{}, e.runError(ctx, id, err)
	}
	return watchViewFrom(snap, time.Now()), nil
}

// watchViewFrom is the view of the run's checkpoint snap at now.
func watchViewFrom(snap graph.Snapshot[state.ExecutionState], now time.Time) WatchView {
	s := snap.State
	v := WatchView{RunID: snap.RunID, Status: runStatus(snap).String(), Goal: s.Run.Goal, Checkpoint: snap.Seq,
		Next: snap.Next, ReviewIteration: s.Progress.ReviewIteration, Errors: s.Errors}
	for _, u := range s.Usage {
		v.Usage = v.Usage.Add(u)
	}
	if len(s.Plan.Phases) > 0 {
		v.CurrentPhase = s.Progress.CurrentPhase + 1
	}
	for i, ph := range s.Plan.Phases {
		var ps state.PhaseState
		if i < len(s.Progress.Phases) {
			ps = s.Progress.Phases[i]
		}
		wp := WatchPhase{Number: i + 1, Status: ps.Status.String(), Attempt: ps.Attempt, Commit: short(ps.PostCommit)}
		if !ps.StartedAt.IsZero() {
			end := ps.CompletedAt
			if end.IsZero() {
				end = now
			}
			wp.DurationSeconds = end.Sub(ps.StartedAt).Round(time.Second).Seconds()
		}
		if i == s.Progress.CurrentPhase && ps.Status != state.PhaseCompleted {
			wp.ReviewIteration = s.Progress.ReviewIteration
		}
		for _, tid := range ph.TaskIDs {
			t, _ := s.Plan.Task(tid)
			wt := WatchTask{ID: tid, Title: t.Title, Status: ps.Status.String()}
			if t.Type != state.TypeNone {
				wt.Type = t.Type.String()
			}
			for _, ts := range ps.Tasks {
				if ts.TaskID == tid {
					wt.Status = ts.Status.String()
				}
			}
			wp.Tasks = append(wp.Tasks, wt)
		}
		v.Phases = append(v.Phases, wp)
	}
	return v
}

func short(sha string) string { return sha[:min(7, len(sha))] }

// writeWatchTree draws v as seed 002's dashboard.
func writeWatchTree(w io.Writer, v WatchView) {
	fmt.Fprintf(w, "%s  [%s, %s]  checkpoint %d\n", v.Goal, v.RunID, v.Status, v.Checkpoint)
	fmt.Fprintf(w, "tokens: %d in, %d out, %d cached  cost: $%.4f\n\n",
		v.Usage.InputTokens, v.Usage.OutputTokens, v.Usage.CachedTokens, v.Usage.CostUSD)
	for _, p := range v.Phases {
		st, _ := parsePhaseStatus(p.Status)
		kind := phaseKind(p.Tasks)
		done := 0
		for _, t := range p.Tasks {
			if t.Status == state.PhaseCompleted.String() {
				done++
			}
		}
		label := p.Status
		switch st {
		case state.PhaseRunning, state.PhaseRetrying:
			label = fmt.Sprintf("Running (%d/%d tasks complete)", done, len(p.Tasks))
		case state.PhasePending:
			label = "Pending"
		case state.PhaseCompleted:
			label = "Completed"
		case state.PhaseFailed:
			label = "Failed"
		}
		var notes []string
		if p.DurationSeconds > 0 {
			notes = append(notes, (time.Duration(p.DurationSeconds) * time.Second).String())
		}
		if p.Attempt > 0 {
			notes = append(notes, fmt.Sprintf("attempt %d", p.Attempt))
		}
		if p.ReviewIteration > 0 {
			notes = append(notes, fmt.Sprintf("review %d", p.ReviewIteration))
		}
		if p.Commit != "" {
			notes = append(notes, p.Commit)
		}
		extra := ""
		if len(notes) > 0 {
			extra = "  (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintf(w, "Phase %d%s: %s %s%s\n", p.Number, kind, mark(st), label, extra)
		for i, t := range p.Tasks {
			branch := "├──"
			if i == len(p.Tasks)-1 {
				branch = "└──"
			}
			ts, _ := parsePhaseStatus(t.Status)
			typ := ""
			if t.Type != "" {
				typ = "[" + t.Type + "] "
			}
			fmt.Fprintf(w, "  %s %s %s%s %s\n", branch, mark(ts), typ, t.ID, t.Title)
		}
	}
	for _, e := range v.Errors {
		fmt.Fprintf(w, "\nerror: %s\n", e)
	}
}

// phaseKind is " (test)" when every typed task of the phase has one type.
func phaseKind(ts []WatchTask) string {
	kind := ""
	for _, t := range ts {
		if t.Type == "" {
			continue
		}
		if kind != "" && kind != t.Type {
			return ""
		}
		kind = t.Type
	}
	if kind == "" {
		return ""
	}
	return " (" + kind + ")"
}

func parsePhaseStatus(s string) (state.PhaseStatus, error) {
	var st state.PhaseStatus
	err := st.UnmarshalText([]byte(s))
	return st, err
}

// watchOr runs `status --watch` when asked, and next otherwise.
func (a *app) watchOr(next ucli.ActionFunc) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if a.inOwner() {
			return next(c)
		}
		// Flags may follow RUN (`status RUN --watch`), where urfave/cli
		// leaves them in the arguments.
		args, err := parseArgs(c, "json", "watch", "w")
		if err != nil {
			return err
		}
		if !c.Bool("watch") && !args.Bool("watch") && !args.Bool("w") {
			return next(c)
		}
		interval := c.Duration("interval")
		if v := args.String("interval"); v != "" {
			if interval, err = time.ParseDuration(v); err != nil {
				return usageErrorf("--interval %q: %v", v, err)
			}
		}
		if interval <= 0 {
			interval = time.Second
		}
		return a.watch(c, args.run, interval, c.Bool("json") || args.Bool("json"))
	}
}

// watch redraws the run until it ends or ctx is done. Leaving it (Ctrl-C)
// is a success that says nothing: watching never touches the run.
func (a *app) watch(c *ucli.Context, runID string, interval time.Duration, asJSON bool) error {
	ctx := c.Context
	tty := a.io.terminal() && !plainTerminal(os.Getenv)
	term := a.io.Out
	if a.io.screen != nil {
		term = a.io.screen.term
	}
	fit := newScreen(nil, termSize(term)) // the picture fits the window: nothing scrolls away
	var last string
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		// Opening the store makes c's context one that closing it cancels
		// (holdCommand): each look starts from the command's own.
		c.Context = ctx
		v, err := a.fetchWatch(c, runID)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		runID = v.RunID // follow the run picked first
		var b strings.Builder
		if asJSON {
			j, _ := json.Marshal(v)
			b.Write(j)
			b.WriteByte('\n')
		} else {
			writeWatchTree(&b, v)
		}
		if cur := b.String(); cur != last {
			switch {
			case tty && !asJSON:
				// Home and erase below, in place: clearing the whole
				// screen pushes a page into some terminals' scrollback.
				lines := fit.fit(strings.Split(strings.TrimSuffix(cur, "\n"), "\n"))
				io.WriteString(a.io.Out, "\x1b[H\x1b[J"+strings.Join(lines, "\n")+"\n")
			case last != "" && !asJSON:
				io.WriteString(a.io.Out, "\n"+cur)
			default:
				io.WriteString(a.io.Out, cur)
			}
			last = cur
		}
		var st state.RunStatus
		if st.UnmarshalText([]byte(v.Status)) == nil && st.Terminal() {
			if st == state.RunCompleted {
				return nil
			}
			return &ExitError{Code: StatusExitCode(st), Err: fmt.Errorf("run %s %s", v.RunID, st)}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// fetchWatch asks the store's holder for the run's view, or reads the
// store itself (briefly) when no process holds it.
func (a *app) fetchWatch(c *ucli.Context, runID string) (WatchView, error) {
	cl, err := controlClient(c)
	if err != nil {
		return WatchView{}, err
	}
	var v WatchView
	err = cl.Call(c.Context, opState, runArgs{RunID: runID}, &v)
	if err == nil {
		return v, nil
	}
	var re *control.RemoteError
	if errors.As(err, &re) || errors.Is(err, control.ErrStranger) || errors.Is(err, control.ErrUnsafeDir) {
		return v, remoteError(err)
	}
	e, err := openEnv(c, a.io)
	if err != nil {
		return v, err
	}
	defer e.Close()
	return watchViewOf(c.Context, e, runID)
}
