package cliagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/agent/internal/label"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/proc"
	"github.com/gaffer-dev/gaffer/agent/internal/short"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
	"github.com/gaffer-dev/gaffer/state"
)

// Defaults of Options.
const (
	DefaultCLITimeout   = 60 * time.Minute
	DefaultCLIKillGrace = 5 * time.Second
	DefaultCLIMaxOutput = 8 << 20
)

// maxStderr is how much of a CLI agent's stderr goes into a failed report.
const maxStderr = 16 << 10

// Options configures a Driver.
type Options struct {
	// Template is the command to run; see ClaudeCode and
	// Codex.
	Template Template
	// Model replaces {model}; empty leaves the agent's own default.
	Model string
	// MaxTurns replaces {max_turns}; 0 leaves the agent's own limit.
	MaxTurns int
	// Environ is the environment the command starts from; nil means the
	// process's own. Its secrets are withheld except those the template's
	// PassEnv names; the template's Env and then Env are added to it.
	Environ []string
	// Env is added last, over the template's: a provider's base URL, a
	// fresh HOME, ...
	Env map[string]string
	// Timeout bounds a session; 0 means DefaultCLITimeout. A session that
	// runs longer has its process group killed and is reported failed;
	// Run also returns agent.ErrUnavailable unless the agent's streamed
	// output shows one of its commands still running (see outage).
	Timeout time.Duration
	// KillGrace is how long the process group has between SIGTERM and
	// SIGKILL; 0 means DefaultCLIKillGrace.
	KillGrace time.Duration
	// MaxOutput bounds how much of stdout is read; 0 means
	// DefaultCLIMaxOutput.
	MaxOutput int
	// Cost, when set, prices a session whose agent does not report its
	// cost (Codex does not; Claude Code does).
	Cost func(model string, u state.Usage) float64
	// Groups, when set, records each session's process group before the
	// agent starts working, so that a gaffer process started after this
	// one was killed can end what it left running.
	Groups agent.GroupRecorder
	// Confine selects how a session's process is confined (see
	// agent.Confinement and Run); the zero value confines its writes with
	// Landlock where the kernel has it.
	Confine agent.Confinement
	// Warn, when set, is told once per Driver when sessions cannot be
	// confined and run unconfined.
	Warn func(msg string)
}

// Driver is the Driver that runs an external coding agent — Claude Code,
// Codex, or any command a Template describes — as a fresh process per
// session. It is safe for concurrent use.
type Driver struct {
	opts    Options
	warn    sync.Once
	iso     proc.Isolator
	isoWarn sync.Once
	// helper confines in-place runs' sessions (see sandbox).
	helper     proc.Helper
	helperWarn sync.Once
	pidWarn    sync.Once
	// reader reads the agent's output and tells its outages: the vendor
	// whose output format the template names, else plain text.
	reader clikit.Vendor
	// vendor is the vendor of the template's program (its state to write,
	// its arguments), else plain text's, which has none.
	vendor clikit.Vendor
}

var _ agent.Driver = (*Driver)(nil)

// NewDriver returns a driver for opts, or an error matching
// ErrInvalidTemplate when its template cannot run.
func NewDriver(opts Options) (*Driver, error) {
	if err := CheckTemplate(opts.Template); err != nil {
		return nil, err
	}
	opts.Template = opts.Template.Clone()
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultCLITimeout
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultCLIKillGrace
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultCLIMaxOutput
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	opts.Environ, opts.Env = slices.Clone(opts.Environ), maps.Clone(opts.Env)
	d := &Driver{opts: opts, reader: byOutput(opts.Template.EffectiveOutput()), vendor: byProgram(opts.Template.Command[0])}
	if d.reader == nil {
		d.reader = textVendor{}
	}
	if d.vendor == nil {
		d.vendor = textVendor{}
	}
	return d, nil
}

// Run runs the template's command for session s and reads its report.
//
// The process starts in s.Dir, in a process group of its own, with the
// prompt handed over as the template says. With s.SessionID set and a
// template that has a resume command, it continues that session. When it
// ends, the rest of its process group is killed; when it outlives
// Options.Timeout, or ctx ends, the whole group gets SIGTERM and, after
// KillGrace, SIGKILL.
//
// The agent's final text, session id and usage are read from its output in
// the template's format. Output that is not in that format is taken as
// plain text: the whole of stdout is the final output. The report is
// failed, with the reason, the agent's error text and the end of its
// stderr in Error, when the agent says it failed (Claude Code's is_error,
// Codex's turn.failed), exits non-zero or times out. Files changed are the
// paths whose "git status" differs after the session, sorted; none when
// s.Dir is not a git work tree. Messages — text, tool calls and results
// — are streamed to s.OnMessage as the agent writes them when its output
// is a stream (Codex's JSON lines, Claude Code's stream-json); otherwise
// the final text is sent when the process ends, and the usage last.
//
// On Linux with Landlock (see Options.Confine) the process and everything
// it starts can write only beneath s.Dir, a TMPDIR of its own (removed
// afterwards), the Go build and module caches (layered for the session, or
// its own: see proc.GoCaches), the agent's own state (agentState: for
// Claude Code $HOME/.claude and $HOME/.claude.json, for Codex
// $HOME/.codex), the template's Writable and /dev files; reads are not
// restricted. Elsewhere it runs unconfined and Options.Warn is told so.
// Unless Options.Confine is off, the process starts in a user namespace of
// its own where the kernel allows one (see agent.ConfineAuto), so that it
// cannot read the environment or memory of gaffer or of the user's shell,
// and, through the sandbox helper, in a PID namespace of its own, with
// s.Dir's .git read-only: it sees and signals only its own processes, and
// none of them outlives it. The "git status" that tells FilesChanged runs
// on the git directory s.Dir's .git named before the session (see
// workTreeGit), never on one the session made it name.
// Session.Tools is passed on where the agent can take it: Claude Code
// ("claude") gets --disallowedTools for the tools the session does not
// allow (see claudeDisallowed); other agents use all their tools.
//
// Run returns an error when the command cannot start (the program is
// missing, s.Dir does not exist) and when ctx ends (wrapping ctx.Err()).
// A failed session whose provider was unreachable or answered 5xx or 429,
// or that ran out its Timeout waiting for its model (see outage), is the
// machine's fault, not the agent's: Run returns its report with an error
// wrapping agent.ErrUnavailable.
func (d *Driver) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	if !s.Role.Valid() {
		return agent.Report{}, fmt.Errorf("%w %q", agent.ErrUnknownRole, s.Role)
	}
	if err := ctx.Err(); err != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %w", label.Of(s), err)
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %w", label.Of(s), err)
	}
	tmpDir, err := tmpdir.Make("cli")
	if err != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %w", label.Of(s), err)
	}
	defer tmpDir.Remove()
	tmp := tmpDir.Path

	s.Prompt += StoryHint(s.StoryDir, storyCosts(dir, s))
	inv, err := d.invocation(s, dir, tmp)
	if err != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %w", label.Of(s), err)
	}
	writable := []string{dir, tmp} // what any session can write
	if inv.conf != nil {
		writable = inv.conf.writable
	}
	repo, isRepo, err := workTreeGit(dir, writable)
	if err != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %w", label.Of(s), err)
	}
	var before treeState
	if isRepo {
		before, isRepo = snapshotTree(ctx, repo, d.opts.Environ)
	}

	run, err := d.start(ctx, s, inv.argv, dir, inv.env, inv.promptFile, tmp, inv.conf)
	if err != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %s: %w", label.Of(s), inv.argv[0], err)
	}
	if ctx.Err() != nil {
		return agent.Report{}, fmt.Errorf("agent: %s: %w", label.Of(s), ctx.Err())
	}

	rep, res := d.report(s, inv.argv[0], inv.resuming, run)
	if isRepo {
		if after, ok := snapshotTree(context.WithoutCancel(ctx), repo, d.opts.Environ); ok {
			rep.FilesChanged = changedPaths(before, after)
		}
	}
	return rep, d.outage(s, inv.argv[0], rep, res, run)
}

// invocation is how a session's process is started: its arguments
// (resuming says they continue a session), its environment, the file
// that holds its prompt, and its confinement (nil for none).
type invocation struct {
	argv       []string
	resuming   bool
	env        []string
	promptFile string
	conf       *confined
}

// invocation prepares session s's process, to run in dir with the
// session's temporary directory tmp.
func (d *Driver) invocation(s agent.Session, dir, tmp string) (invocation, error) {
	v := placeholders{prompt: s.Prompt, dir: dir, model: d.model(s), session: s.SessionID}
	if d.opts.MaxTurns > 0 {
		v.maxTurns = strconv.Itoa(d.opts.MaxTurns)
	}
	// The prompt goes to a file outside the repository: for PromptFile its
	// path is the placeholder, for PromptStdin it is opened as stdin (a file,
	// not a pipe, so nothing blocks on an agent that does not read it).
	inv := invocation{promptFile: filepath.Join(tmp, "prompt.md")}
	if err := os.WriteFile(inv.promptFile, []byte(s.Prompt), 0o600); err != nil {
		return inv, err
	}
	if d.opts.Template.EffectivePrompt() == PromptFile {
		v.promptFile = inv.promptFile
	}
	inv.argv, inv.resuming = argv(d.opts.Template, v)
	inv.argv = append(inv.argv, d.vendor.Args(s)...)
	inv.env = d.environ(v)
	if d.opts.Confine == agent.ConfineOff {
		return inv, nil
	}
	var err error
	inv.conf, inv.env, err = d.confine(dir, tmp, inv.env)
	return inv, err
}

// confine returns the confinement of a session in dir whose temporary
// directory is tmp, and its environment env with a TMPDIR of its own and
// the Go caches it may use.
func (d *Driver) confine(dir, tmp string, env []string) (*confined, []string, error) {
	agentTmp := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(agentTmp, 0o700); err != nil {
		return nil, nil, err
	}
	env = append(environ.Without(env, "TMPDIR"), "TMPDIR="+agentTmp)
	conf := &confined{rules: d.confinement()}
	if layered := d.helper.Layered(); layered || conf.rules != nil {
		// The Go caches are the user's: the session sees them
		// layered, or gets caches of its own (see proc.GoCaches).
		var caches []string
		conf.layers, caches, env = proc.GoCaches(env, tmp, layered)
		conf.writable = caches
	}
	conf.writable = append(d.writable(dir, agentTmp, env), conf.writable...)
	return conf, env, nil
}

// model is the model session s runs: its own, else the driver's.
func (d *Driver) model(s agent.Session) string {
	if s.Model != "" {
		return s.Model
	}
	return d.opts.Model
}

// outage returns an error wrapping agent.ErrUnavailable when the failed
// session's provider was out (see clikit.Vendor's Outage), nil otherwise.
func (d *Driver) outage(s agent.Session, program string, rep agent.Report, res clikit.Result, run cliRun) error {
	if rep.Status != agent.StatusFailed {
		return nil
	}
	why := d.reader.Outage(clikit.Run{ExitCode: run.exitCode, TimedOut: run.timedOut, Busy: run.busy, Stderr: run.stderr}, res)
	if why == "" {
		return nil
	}
	if run.timedOut {
		why = fmt.Sprintf("the session limit of %v was reached: %s", d.opts.Timeout, why)
	}
	return fmt.Errorf("%w: %s: %s: %s (%d file(s) changed)", agent.ErrUnavailable, label.Of(s),
		filepath.Base(program), d.redact(why), len(rep.FilesChanged))
}

// report reads the session's report from how its process ended, and
// streams its messages.
func (d *Driver) report(s agent.Session, program string, resuming bool, run cliRun) (agent.Report, clikit.Result) {
	res := d.reader.Parse(run.stdout)
	rep := agent.Report{Status: agent.StatusCompleted, Output: res.Text, SessionID: res.SessionID, Usage: res.Usage}
	if !res.Parsed {
		rep.Output = strings.TrimSpace(string(run.stdout))
	}
	if rep.SessionID == "" && resuming {
		rep.SessionID = s.SessionID
	}
	if !res.CostKnown && d.opts.Cost != nil {
		rep.Usage.CostUSD = d.opts.Cost(d.model(s), rep.Usage)
	}
	if why := d.failure(program, run, res); why != "" {
		rep.Status = agent.StatusFailed
		rep.Error = d.redact(why)
		rep.Summary = short.FirstLine(rep.Error)
	} else {
		rep.Summary = short.FirstLine(rep.Output)
	}
	if s.Role == agent.RoleDeveloper {
		rep.Story, _ = agent.ParseFacts(rep.Output)
	}
	for _, m := range res.Messages[min(run.streamed, len(res.Messages)):] {
		s.Emit(m)
	}
	if len(res.Messages) == 0 && rep.Output != "" {
		s.Emit(agent.Message{Kind: agent.Text, Text: rep.Output})
	}
	if !rep.Usage.IsZero() {
		s.Emit(agent.Message{Kind: agent.UsageUpdate, Usage: rep.Usage})
	}
	return rep, res
}

// failure returns why the session failed, or "" when it did not.
func (d *Driver) failure(program string, run cliRun, res clikit.Result) string {
	var why []string
	switch {
	case run.timedOut && run.busy != "":
		why = append(why, fmt.Sprintf("%s ran longer than the session limit of %v while running %s, and was killed", filepath.Base(program), d.opts.Timeout, short.FirstLine(run.busy)))
	case run.timedOut:
		why = append(why, fmt.Sprintf("%s ran longer than the session limit of %v, waiting for its model, and was killed", filepath.Base(program), d.opts.Timeout))
	case res.IsError:
		why = append(why, res.ErrText)
		if run.exitCode != 0 {
			why = append(why, "("+exitText(program, run.exitCode)+")")
		}
	case run.exitCode != 0:
		why = append(why, exitText(program, run.exitCode))
		if out := strings.TrimSpace(string(run.stdout)); out != "" && !res.Parsed {
			why = append(why, "stdout:\n"+out)
		} else if res.Text != "" {
			why = append(why, res.Text)
		}
	default:
		return ""
	}
	if e := strings.TrimSpace(run.stderr); e != "" {
		why = append(why, "stderr:\n"+e)
	}
	return strings.Join(why, "\n")
}

// exitText says how the program ended: "claude exited with status 1", or
// "claude was killed by a signal".
func exitText(program string, code int) string {
	if code < 0 {
		return filepath.Base(program) + " was killed by a signal"
	}
	return fmt.Sprintf("%s exited with status %d", filepath.Base(program), code)
}

// environ returns the command's environment: the base without the secrets
// the template does not pass, then the template's additions, then
// Options.Env (later entries win).
func (d *Driver) environ(v placeholders) []string {
	env := make([]string, 0, len(d.opts.Environ)+len(d.opts.Template.Env)+len(d.opts.Env))
	for _, kv := range d.opts.Environ {
		name, _, _ := strings.Cut(kv, "=")
		if !agent.IsSecretName(name) || slices.Contains(d.opts.Template.PassEnv, name) {
			env = append(env, kv)
		}
	}
	env = append(env, templateEnv(d.opts.Template, v)...)
	extra := Template{Env: d.opts.Env}
	return append(env, templateEnv(extra, v)...)
}

// redact replaces the values of secret environment variables in text, so
// an agent that echoes its API key does not put it in a report.
func (d *Driver) redact(text string) string {
	var pairs []string
	for _, kv := range d.opts.Environ {
		name, val, _ := strings.Cut(kv, "=")
		if agent.IsSecretName(name) && len(val) >= 4 {
			pairs = append(pairs, val, "[redacted "+name+"]")
		}
	}
	for name, val := range d.opts.Env {
		if agent.IsSecretName(name) && len(val) >= 4 {
			pairs = append(pairs, val, "[redacted "+name+"]")
		}
	}
	if len(pairs) == 0 {
		return text
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// cliRun is how a CLI agent's process ended.
type cliRun struct {
	stdout   []byte
	stderr   string // the end of it
	exitCode int    // -1 when killed by a signal
	timedOut bool
	// busy names the tool the agent was running when it timed out; ""
	// when it was waiting for its model or its output does not say.
	busy     string
	streamed int // messages already sent to Session.OnMessage while it ran
}

// streamInterval is how often a running agent's output is read for
// messages to stream.
const streamInterval = 200 * time.Millisecond

// lineReader reads the complete lines appended to a file since the last
// call, up to limit bytes from its start.
type lineReader struct {
	f     *os.File
	limit int64
	off   int64 // the start of the first line not yet returned
}

// next returns the complete lines written since the last call.
func (r *lineReader) next() [][]byte {
	fi, err := r.f.Stat()
	if err != nil {
		return nil
	}
	end := min(fi.Size(), r.limit)
	if end <= r.off {
		return nil
	}
	buf := make([]byte, end-r.off)
	n, _ := r.f.ReadAt(buf, r.off)
	buf = buf[:n]
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		return nil
	}
	r.off += int64(last + 1)
	return bytes.Split(buf[:last], []byte("\n"))
}

// confined is how a session's process is confined: the Landlock rules
// (nil where the kernel has none), the paths it may write beneath and the
// directories layered for it.
type confined struct {
	rules    *landlock.Rules
	writable []string
	layers   []proc.Layer
}

// start runs argv to its end: stdin comes from promptFile (PromptStdin),
// stdout and stderr go to files in tmp (so a child that keeps them open
// cannot hold up the wait), and the process group is killed when the
// process ends, times out or ctx ends. With conf, the process is started
// and waited for on a thread confined by it. While it runs, the messages of
// the complete lines it has written are streamed to s.OnMessage.
func (d *Driver) start(ctx context.Context, s agent.Session, argv []string, dir string, env []string, promptFile, tmp string, conf *confined) (cliRun, error) {
	stdout, err := os.Create(filepath.Join(tmp, "stdout"))
	if err != nil {
		return cliRun{}, err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(tmp, "stderr"))
	if err != nil {
		return cliRun{}, err
	}
	defer stderr.Close()

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	d.isolate(cmd)
	if d.opts.Template.EffectivePrompt() == PromptStdin {
		in, err := os.Open(promptFile)
		if err != nil {
			return cliRun{}, err
		}
		defer in.Close()
		cmd.Stdin = in
	}
	g, done, err := d.launch(cmd, conf)
	if err != nil {
		return cliRun{}, fmt.Errorf("start: %w", err)
	}

	timer := time.NewTimer(d.opts.Timeout)
	defer timer.Stop()
	poll := time.NewTicker(streamInterval)
	defer poll.Stop()
	lines := lineReader{f: stdout, limit: int64(d.opts.MaxOutput)}
	parser := d.reader.Lines()
	var run cliRun
wait:
	for {
		select {
		case <-done:
			break wait
		case <-poll.C:
			for _, line := range lines.next() {
				for _, m := range parser.Messages(line) {
					s.Emit(m)
					run.streamed++
				}
			}
		case <-timer.C:
			for _, line := range lines.next() { // what it said last: was it running a tool?
				for _, m := range parser.Messages(line) {
					s.Emit(m)
					run.streamed++
				}
			}
			run.timedOut, run.busy = true, parser.Busy()
			d.stop(cmd, done)
			break wait
		case <-ctx.Done():
			d.stop(cmd, done)
			break wait
		}
	}
	g.Kill() // whatever the agent left running dies with the session
	g.Forget()
	run.exitCode = cmd.ProcessState.ExitCode()

	if run.stdout, err = readCapped(stdout, d.opts.MaxOutput); err != nil {
		return run, fmt.Errorf("read stdout: %w", err)
	}
	tail, err := readTail(stderr, maxStderr)
	if err != nil {
		return run, fmt.Errorf("read stderr: %w", err)
	}
	run.stderr = tail
	return run, nil
}

// launch starts cmd in a recorded process group (see proc.Start) and
// waits for it in the background, sending the result on done. Confined
// (conf), it starts through the sandbox helper where that is possible
// (see Driver.sandbox), or else, with Landlock, both happen on a thread
// that conf's rules confine (the thread the process inherits its Landlock
// domain from, which ends once it has been waited for), and the group is
// recorded off that thread.
func (d *Driver) launch(cmd *exec.Cmd, conf *confined) (g *proc.Group, done <-chan error, err error) {
	waited := make(chan error, 1)
	var exe string
	var sb proc.Sandbox
	if conf != nil {
		exe, sb = d.sandbox(conf.writable, conf.rules != nil, conf.layers)
	}
	switch {
	case exe != "":
		// The helper confines the session: its namespaces, .git
		// read-only, the caches layered, then Landlock.
		g, err := proc.StartIn(cmd, d.opts.Groups, sb, exe)
		if err != nil {
			return nil, nil, err
		}
		go func() { waited <- cmd.Wait() }()
		return g, waited, nil
	case conf == nil || conf.rules == nil:
		g, err := proc.Start(cmd, d.opts.Groups)
		if err != nil {
			return nil, nil, err
		}
		go func() { waited <- cmd.Wait() }()
		return g, waited, nil
	}
	type started struct {
		g   *proc.Group
		err error
	}
	ch := make(chan started, 1)
	conf.rules.Go(conf.writable, func(confineErr error) {
		if confineErr != nil {
			ch <- started{err: fmt.Errorf("confine the agent: %w", confineErr)}
			return
		}
		g, err := proc.Start(cmd, proc.OffThread(d.opts.Groups))
		ch <- started{g, err}
		if err == nil {
			waited <- cmd.Wait()
		}
	})
	st := <-ch
	if st.err != nil {
		return nil, nil, st.err
	}
	return st.g, waited, nil
}

// stop ends cmd's process group: SIGTERM, then SIGKILL after the grace
// period if the process has not exited, then waits for it.
func (d *Driver) stop(cmd *exec.Cmd, done <-chan error) {
	_ = proc.Signal(cmd, true)
	grace := time.NewTimer(d.opts.KillGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		_ = proc.Signal(cmd, false)
		<-done
	}
}

// readCapped reads at most max bytes of f from its start.
func readCapped(f *os.File, max int) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, int64(max)))
}

// readTail returns the last limit bytes of f, as valid UTF-8.
func readTail(f *os.File, limit int64) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	off := max(fi.Size()-limit, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	s := strings.ToValidUTF8(string(buf), "")
	if off > 0 {
		s = "[…]" + s
	}
	return s, nil
}

// StoryHint is what a CLI agent (Claude Code, Codex), which has no
// expand_context tool, is told of the Task Story: where its files are in
// the work tree, the command that prints one phase's records, what
// reading them costs (cost, agent.CostLine's sentence; "" for none) and
// when to read them. "" for a session without a story (storyDir, slash
// separated, relative to the session's directory).
func StoryHint(storyDir, cost string) string {
	if storyDir == "" {
		return ""
	}
	if cost != "" {
		cost = "\n" + cost + " Read only the phase you need."
	}
	return fmt.Sprintf(`
## When you need more than the story in this prompt

The Task Story's full records are files in your work tree: %[1]s/NNN-ROLE-pP-aA.json,
one per session (P is the phase, A the attempt), with every decision and its reason,
the commands, methods, dependencies, requirements, recommendations and the session's
summary. The story above is compressed from them. When it lacks a detail you need (why
something was decided, an alternative that was rejected, a name an earlier phase gave),
read the records of that phase, such as %[1]s/*-p3-a*.json for phase 3, instead of
guessing; `+"`gaffer story show --phase 3`"+` prints the same records in order, where gaffer
is on your PATH.%[2]s Do not edit them.
`, storyDir, cost)
}

// storyCosts is the sentence naming what reading each earlier phase's
// records adds, for a session in dir; "" for phase 1 or a story
// directory that cannot be read.
func storyCosts(dir string, s agent.Session) string {
	if s.StoryDir == "" || s.Phase < 2 {
		return ""
	}
	costs, err := agent.ExpansionCosts(filepath.Join(dir, filepath.FromSlash(s.StoryDir)), s.StoryDir, s.Phase)
	if err != nil {
		return ""
	}
	return agent.CostLine(costs)
}
