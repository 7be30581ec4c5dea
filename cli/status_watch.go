package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// WatchView is a run as `status --watch` draws it (and prints it, one JSON
// object per change, with --json): the one view model of the phase tree,
// runview's.
type WatchView = runview.Tree

// WatchPhase is one phase of a WatchView.
type WatchPhase = runview.Phase

// WatchTask is one task of a WatchPhase.
type WatchTask = runview.Task

// writeWatchTree draws v as seed 002's dashboard: a heading with the
// checkpoint and the tokens, the phase tree, the errors.
func writeWatchTree(w io.Writer, v WatchView) {
	status := v.Status
	if v.Stopped {
		status += " (" + stoppedNote + ")"
	}
	fmt.Fprintf(w, "%s  [%s, %s]  checkpoint %d\n", v.Goal, v.RunID, status, v.Checkpoint)
	fmt.Fprintf(w, "tokens: %d in, %d out, %d cached  cost: $%.4f\n\n",
		v.Usage.InputTokens, v.Usage.OutputTokens, v.Usage.CachedTokens, v.Usage.CostUSD)
	writePhaseTree(w, v.Phases)
	for _, e := range v.Errors {
		fmt.Fprintf(w, "\nerror: %s\n", e)
	}
}

// watchOr runs `status --watch` when asked, and next otherwise.
func (a *app) watchOr(next ucli.ActionFunc) ucli.ActionFunc {
	return func(c *ucli.Context) error {
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
// is a success that ends with one line, the run's state as last seen
// (watchLeft; on stderr with --json): watching never touches the run.
func (a *app) watch(c *ucli.Context, runID string, interval time.Duration, asJSON bool) error {
	ctx := c.Context
	tty := a.io.terminal() && !plainTerminal(a.io.getenv)
	term := a.io.Out
	if a.io.screen != nil {
		term = a.io.screen.term
	}
	fit := newScreen(nil, termSize(term)) // the picture fits the window: nothing scrolls away
	var (
		last string
		seen WatchView
	)
	left := func() error {
		if seen.RunID == "" {
			return nil
		}
		w, pre := a.io.Out, ""
		if asJSON {
			w = a.io.Err
		} else if tty {
			pre = "\r\x1b[K" // over the terminal's ^C
		}
		_, err := io.WriteString(w, pre+watchLeft(seen)+"\n")
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		v, err := a.fetchWatch(c, runID)
		if ctx.Err() != nil {
			return left()
		}
		if err != nil {
			return err
		}
		runID, seen = v.RunID, v // follow the run picked first
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
			return left()
		case <-t.C:
		}
	}
}

// watchLeft is the line status --watch ends with when left (Ctrl-C): the
// run, its status, phase and checkpoint as last seen, and that it goes on.
func watchLeft(v WatchView) string {
	where := ""
	if v.CurrentPhase > 0 && len(v.Phases) > 0 {
		where = fmt.Sprintf(", phase %d of %d", v.CurrentPhase, len(v.Phases))
	}
	return fmt.Sprintf("Stopped watching: run %s is %s%s (checkpoint %d); watching did not change it.", v.RunID, v.Status, where, v.Checkpoint)
}

// fetchWatch asks the run's host for its view: the process holding the
// store, or this one, which opens it briefly.
func (a *app) fetchWatch(c *ucli.Context, runID string) (WatchView, error) {
	var v WatchView
	err := withService(c, a.io, true, func(svc host.Service, _ func(...string) string) error {
		rs, err := svc.Status(c.Context, host.RunRequest{RunID: runID})
		if err != nil {
			return err
		}
		v = runview.RunOf(rs, time.Now()).Tree
		return nil
	})
	return v, err
}
