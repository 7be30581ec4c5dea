package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

func logsCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "logs",
		Usage:        "print the agents' sessions of a run: messages, tool calls and results, reports (the newest run without RUN)",
		OnUsageError: onUsageError,
		ArgsUsage:    "[RUN]",
		Flags: localGlobals(
			&ucli.Uint64Flag{Name: "phase", EnvVars: []string{"GAFFER_PHASE"}, Usage: "only phase N's sessions (0: the architect's)"},
			&ucli.StringFlag{Name: "task", EnvVars: []string{"GAFFER_TASK"}, Usage: "only the sessions of the lane that does task ID (a phase of several lanes)"},
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, EnvVars: []string{"GAFFER_FOLLOW"}, Usage: "keep printing as the run goes on, until it ends (Ctrl-C to leave)"},
		),
		Action: func(c *ucli.Context) error {
			a, err := parseArgs(c, "follow", "f")
			if err != nil {
				return err
			}
			phase := -1
			if a.c.IsSet("phase") || a.extra["phase"] != "" {
				n, err := a.Uint64("phase")
				if err != nil {
					return err
				}
				phase = int(n)
			}
			dir, err := logsDir(c)
			if err != nil {
				return err
			}
			follow := a.Bool("follow") || a.Bool("f")
			task := a.String("task")
			if err := checkLogsPhase(c, io, dir, a.run, phase, follow); err != nil {
				return err
			}
			if err := checkLogsTask(dir, a.run, task, follow); err != nil {
				return err
			}
			return logsOf(c.Context, io.Out, dir, a.run, logsFilter{phase: phase, task: task}, follow, 200*time.Millisecond, holderRuns(c))
		},
	}
}

// checkLogsPhase refuses --phase N when the run (the newest with
// transcripts for "") has no session of phase N recorded: beyond the
// run's phases, exit 2 (as diff does); a phase with no session yet, exit
// 8 with the command that waits for one (without --follow: with it, logs
// waits). The run's phases are asked of its store then only, so that
// logs keeps working without one; a store that cannot tell is no
// refusal of a phase beyond them.
func checkLogsPhase(c *ucli.Context, io IO, dir, runID string, phase int, follow bool) error {
	if phase < 0 {
		return nil
	}
	if runID == "" {
		id, err := newestTranscript(dir)
		if err != nil {
			return nil // LogsWith says so
		}
		runID = id
	}
	f := &follower{phase: phase}
	if entries, err := os.ReadDir(filepath.Join(dir, runID)); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".jsonl") && f.wants(e.Name()) {
				return nil
			}
		}
	}
	var n int
	found, status := false, ""
	cmd := func(args ...string) string { return "gaffer " + strings.Join(args, " ") }
	_ = withService(c, io, true, func(svc host.Service, f func(...string) string) error {
		cmd = f
		rs, err := svc.Status(c.Context, host.RunRequest{RunID: runID})
		if err == nil {
			s := rs.Snapshot.State
			n, found = len(s.Plan.Phases), true
			if ps, err := s.PhaseState(phase - 1); err == nil && phase > 0 {
				status = " (it is " + ps.Status.String() + ")"
			} else if phase > 0 && phase <= n {
				status = " (it is " + state.PhasePending.String() + ")"
			}
		}
		return err
	})
	switch {
	case found && phase > n:
		return phaseRange(phase, runID, n)
	case follow:
		return nil
	}
	if phase == 0 {
		return exitf(ExitPrecondition, "run %s has no architect session recorded (a run given --plan has none)", runID)
	}
	return exitf(ExitPrecondition, "run %s has no agent session of phase %d%s recorded yet; %s waits for one",
		runID, phase, status, cmd("logs", runID, "--phase", strconv.Itoa(phase), "--follow"))
}

// checkLogsTask refuses --task ID (without --follow, which waits) when
// the run (the newest with transcripts for "") has no lane session of
// task ID recorded: exit 8, saying that a task of a phase of one lane is
// its phase's session. An ID no plan could hold is exit 2.
func checkLogsTask(dir, runID, task string, follow bool) error {
	if task == "" {
		return nil
	}
	if !taskIDRe.MatchString(task) {
		return exitf(ExitUsage, "--task %q: a task id is a digit then digits, letters and dots (as the plan's \"### Task 2a:\")", task)
	}
	if runID == "" {
		id, err := newestTranscript(dir)
		if err != nil {
			return nil // LogsWith says so
		}
		runID = id
	}
	f := &follower{phase: -1, task: task}
	if entries, err := os.ReadDir(filepath.Join(dir, runID)); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".jsonl") && f.wants(e.Name()) {
				return nil
			}
		}
	}
	if follow {
		return nil
	}
	return exitf(ExitPrecondition, "run %s has no lane session of task %s recorded: a task of a phase of one lane is its phase's session (gaffer logs %s --phase N)",
		runID, task, runID)
}

// taskIDRe is a task id as plans give them (state's idRe).
var taskIDRe = regexp.MustCompile(`^[0-9](?:[0-9a-z]|\.[0-9a-z])*$`)

// phaseRange is the refusal of --phase N beyond run id's n phases (diff,
// logs).
func phaseRange(phase int, id string, n int) error {
	return exitf(ExitUsage, "--phase %d: run %s has %s", phase, id, plural(n, "phase"))
}

// logsDir is the transcripts' directory of the store the command names.
// It needs no store: logs works while another process holds it.
func logsDir(c *ucli.Context) (string, error) {
	g, storeSet, err := globalsOf(c)
	if err != nil {
		return "", err
	}
	dir := g.Store
	if !storeSet {
		repo, err := workspace.Open(g.Repo)
		if err != nil {
			return "", exitf(ExitPrecondition, "%w", err)
		}
		dir = filepath.Join(workspace.GitDir(repo.Root()), "gaffer")
	}
	return host.TranscriptDir(dir), nil
}

// Logs prints the transcripts of run runID (the newest run with any when
// ""), only phase's sessions when phase >= 0. With follow it keeps
// printing what the sessions add, polling every poll, until the run
// ends or ctx is done (Ctrl-C: exit 0).
func Logs(ctx context.Context, w io.Writer, dir, runID string, phase int, follow bool, poll time.Duration) error {
	return LogsWith(ctx, w, dir, runID, phase, follow, poll, nil)
}

// followChecks is how many polls apart a follow asks whether a process
// still runs the run, and missedChecks how many answers in a row must be
// no before it stops.
const (
	followChecks = 5
	missedChecks = 2
)

// LogsWith is Logs, where a follow also stops once running (nil: never
// asked) says, missedChecks times in a row, that no process runs the
// run, and the run has sessions: a run killed (or stopped by an error)
// never writes its end. A run not yet started is waited for.
func LogsWith(ctx context.Context, w io.Writer, dir, runID string, phase int, follow bool, poll time.Duration,
	running func(context.Context, string) bool) error {
	return logsOf(ctx, w, dir, runID, logsFilter{phase: phase}, follow, poll, running)
}

// logsFilter selects a run's sessions: phase's (all when < 0), and
// only task's lane's when task is set.
type logsFilter struct {
	phase int
	task  string
}

// logsOf is LogsWith with a filter.
func logsOf(ctx context.Context, w io.Writer, dir, runID string, lf logsFilter, follow bool, poll time.Duration,
	running func(context.Context, string) bool) error {
	if runID == "" {
		id, err := newestTranscript(dir)
		if err != nil {
			return err
		}
		runID = id
	}
	runDir := filepath.Join(dir, runID)
	if _, err := os.Stat(runDir); err != nil {
		if !follow {
			return exitf(ExitPrecondition, "no agent sessions recorded for run %s (in %s)", runID, dir)
		}
	}
	f := &follower{w: w, dir: runDir, phase: lf.phase, task: lf.task, offsets: map[string]int64{}}
	missed := 0
	for n := 0; ; n++ {
		ended := f.ended() // before reading: what was written before the end is printed
		gone := false
		if follow && !ended && running != nil && n%followChecks == followChecks-1 && len(f.offsets) > 0 {
			if running(ctx, runID) {
				missed = 0
			} else {
				missed++
			}
			gone = missed >= missedChecks // asked before reading, as ended
		}
		if err := f.step(); err != nil {
			return err
		}
		if gone {
			fmt.Fprintf(w, "\n── no process is running run %s (killed, or stopped by an error): gaffer resume %s continues it ──\n", runID, runID)
			return nil
		}
		if !follow || ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

// holderRuns asks the process holding c's store whether it runs a run:
// no process holding the store, or one that answers that the run is
// stopped, is no. Any other answer (an error of the holder's, a stranger
// on the socket) is yes: logs waits, as before.
func holderRuns(c *ucli.Context) func(context.Context, string) bool {
	return func(ctx context.Context, runID string) bool {
		dir, _, err := storeOf(c)
		if err != nil {
			return true
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rs, err := socket.NewClient(dir).Status(ctx, host.RunRequest{RunID: runID})
		if err != nil {
			return !errors.Is(err, control.ErrNoServer)
		}
		return !rs.Stopped
	}
}

// newestTranscript returns the run whose transcripts changed last.
func newestTranscript(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", exitf(ExitPrecondition, "no agent sessions recorded in this repository (no %s)", dir)
	}
	if err != nil {
		return "", fmt.Errorf("logs: %w", err)
	}
	var best string
	var bestTime time.Time
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && (best == "" || fi.ModTime().After(bestTime)) {
			best, bestTime = e.Name(), fi.ModTime()
		}
	}
	if best == "" {
		return "", exitf(ExitPrecondition, "no agent sessions recorded in this repository (in %s)", dir)
	}
	return best, nil
}

// follower prints a run's transcripts, each line once.
type follower struct {
	w       io.Writer
	dir     string
	phase   int
	task    string           // only the sessions of this task's lane when set
	offsets map[string]int64 // file → bytes printed
}

func (f *follower) ended() bool {
	_, err := os.Stat(filepath.Join(f.dir, host.TranscriptEnd))
	return err == nil
}

// step prints what the transcripts gained since the last step: new
// files in name order, complete lines only.
func (f *follower) step() error {
	entries, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") && f.wants(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if err := f.file(name); err != nil {
			return err
		}
	}
	return nil
}

// wants reports whether a transcript's file belongs to the phase (and
// the task's lane) asked for.
func (f *follower) wants(name string) bool {
	if f.task != "" && !slices.Contains(laneTasks(name), f.task) {
		return false
	}
	if f.phase < 0 {
		return true
	}
	return strings.Contains(name, "-p"+strconv.Itoa(f.phase)+"-a")
}

// laneTasks are the task ids a lane session's transcript is named with
// ("003-developer-p1-a1-i1-t2+3.jsonl": 2 and 3); nil for any other.
func laneTasks(name string) []string {
	parts := strings.Split(strings.TrimSuffix(name, ".jsonl"), "-")
	if len(parts) != 6 || !strings.HasPrefix(parts[5], "t") {
		return nil
	}
	return strings.Split(parts[5][1:], "+")
}

func (f *follower) file(name string) error {
	off, seen := f.offsets[name] // seen: its header is printed
	fh, err := os.Open(filepath.Join(f.dir, name))
	if err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	defer fh.Close()
	if _, err := fh.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	b, err := io.ReadAll(fh)
	if err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil // no complete line yet: the header waits for one
	}
	if !seen {
		fmt.Fprintf(f.w, "── %s ──\n", sessionTitle(name))
	}
	for _, l := range bytes.Split(b[:end], []byte("\n")) {
		var tl profile.TranscriptLine
		if err := json.Unmarshal(l, &tl); err != nil {
			continue
		}
		writeTranscriptLine(f.w, tl)
	}
	f.offsets[name] = off + int64(end) + 1
	return nil
}

// sessionTitle turns "002-developer-p2-a1-i1.jsonl" into "developer,
// phase 2, attempt 1, iteration 1" (an architect's session: "architect";
// a lane's, "...-t2+3.jsonl": "developer, phase 2, tasks 2+3, attempt 1,
// iteration 1").
func sessionTitle(name string) string {
	parts := strings.Split(strings.TrimSuffix(name, ".jsonl"), "-")
	lane := ""
	if t := laneTasks(name); t != nil {
		word := "task"
		if len(t) > 1 {
			word = "tasks"
		}
		lane, parts = ", "+word+" "+strings.Join(t, "+"), parts[:5]
	}
	if len(parts) != 5 {
		return name
	}
	role, p, a, i := parts[1], parts[2][1:], parts[3][1:], parts[4][1:]
	if p == "0" {
		return role
	}
	return fmt.Sprintf("%s, phase %s%s, attempt %s, iteration %s", role, p, lane, a, i)
}

// writeTranscriptLine prints one line of a transcript, indented.
func writeTranscriptLine(w io.Writer, l profile.TranscriptLine) {
	var head, body string
	switch l.Kind {
	case "text":
		body = l.Text
	case "tool_call":
		head, body = "→ "+l.Tool, l.Input
	case "tool_result":
		head, body = "← "+l.Tool, l.Text
		if l.IsError {
			head += " (failed)"
		}
	case "usage":
		if l.Usage != nil {
			body = fmt.Sprintf("usage: %d in, %d out, %d cached, %s", l.Usage.InputTokens, l.Usage.OutputTokens, l.Usage.CachedTokens, costText(l.Usage.CostUSD))
		}
	case "report":
		head, body = "= report", l.Text
	default:
		head, body = "…", l.Text
	}
	text := strings.TrimRight(body, "\n")
	if head != "" && text != "" {
		head += ": "
	}
	lines := strings.Split(head+text, "\n")
	for i, s := range lines {
		prefix := "  "
		if i > 0 {
			prefix = "    "
		}
		fmt.Fprintf(w, "%s%s\n", prefix, s)
	}
}
