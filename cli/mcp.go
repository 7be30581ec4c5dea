package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/host/socket"
	"github.com/gaffer-dev/gaffer/inbox"
	"github.com/gaffer-dev/gaffer/mcpserve"
	"github.com/gaffer-dev/gaffer/profile"
	"github.com/gaffer-dev/gaffer/workspace"
)

func mcpCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:  "mcp",
		Usage: "serve gaffer's runs to your coding agent as a Model Context Protocol server (stdin and stdout)",
		Description: "Claude Code, Codex, Cursor and VS Code start `gaffer mcp` and call its tools: plan_validate,\n" +
			"run_start, runs_list, run_status, run_wait, run_approve, run_reject, run_answer, run_cancel,\n" +
			"run_logs, run_diff and run_merge (docs/mcp.md). Runs it starts or approves outlive it: they go\n" +
			"to the gaffer serve that holds the store, or to a detached gaffer process.",
		OnUsageError: onUsageError,
		Flags: localGlobals(
			&ucli.StringFlag{Name: "http", EnvVars: []string{"GAFFER_HTTP"}, Usage: "serve Streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdin and stdout"},
			&ucli.StringFlag{Name: "token-file", EnvVars: []string{"GAFFER_TOKEN_FILE"}, Usage: "with --http, a file holding the bearer token every request needs"},
		),
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("mcp takes no arguments")
			}
			return MCP(c, io)
		},
	}
}

// MCP serves c's store's runs over MCP: on standard input and output, or
// with --http on a loopback address, until the client leaves or the
// process is told to stop.
func MCP(c *ucli.Context, o IO) error {
	addr, token := c.String("http"), ""
	if f := c.String("token-file"); f != "" {
		if addr == "" {
			return usageErrorf("--token-file needs --http")
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return exitf(ExitPrecondition, "--token-file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" || strings.ContainsAny(token, " \t\r\n") {
			return exitf(ExitPrecondition, "--token-file %s: want one token on one line (make one with: openssl rand -hex 32 > %s)", f, f)
		}
	}
	if addr != "" && !inbox.Loopback(addr) {
		return usageErrorf("--http %s: gaffer mcp listens on a loopback address only, such as 127.0.0.1:8765", addr)
	}
	b, err := newMCPBackend(c, o)
	if err != nil {
		return err
	}
	g, _, _ := globalsOf(c)
	srv, err := mcpserve.New(mcpserve.Config{Backend: b, Version: o.version, Logger: g.Logger(o.Err)})
	if err != nil {
		return err
	}
	if addr == "" {
		err := srv.ServeStdio(c.Context)
		if errors.Is(err, io.EOF) || c.Context.Err() != nil {
			return nil // the client left, or we were told to stop
		}
		return err
	}
	return serveMCPHTTP(c.Context, o, addr, inbox.Guard(token, srv.Handler()))
}

// serveMCPHTTP serves h on addr until ctx ends.
func serveMCPHTTP(ctx context.Context, o IO, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitf(ExitPrecondition, "--http %s: %w", addr, err)
	}
	fmt.Fprintf(o.Err, "gaffer mcp on http://%s/\n", ln.Addr())
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	}
}

// mcpBackend is the MCP server's mcpserve.Backend: host.Service on the
// store of the command's flags, as every command finds it (the process
// that holds it, or the store opened here for the call), and detached
// gaffer processes for what drives a run, so that the run outlives the
// server.
type mcpBackend struct {
	c    *ucli.Context
	io   IO // the hosts' front: standard output is the protocol's, so everything goes to the error output
	dir  string
	g    Globals
	set  bool // the store was given (flag or environment)
	exe  string
	poll time.Duration

	// A detached process about to take the store holds mu for writing:
	// until it holds the store, reads do not open it here.
	mu sync.RWMutex
}

var _ mcpserve.Backend = (*mcpBackend)(nil)

func newMCPBackend(c *ucli.Context, io IO) (*mcpBackend, error) {
	dir, g, err := storeOf(c)
	if err != nil {
		return nil, err
	}
	_, set, err := globalsOf(c)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("gaffer mcp: %w", err)
	}
	quiet := IO{In: strings.NewReader(""), Out: io.Err, Err: io.Err, Terminal: func() bool { return false }, Keys: io.Keys, Getenv: io.Getenv, Hooks: io.Hooks, version: io.version}
	return &mcpBackend{c: c, io: quiet, dir: dir, g: g, set: set, exe: exe, poll: 50 * time.Millisecond}, nil
}

// service calls f with the run service: withService's connection, for
// a call's context.
func (b *mcpBackend) service(ctx context.Context, read bool, f func(host.Service) error) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return socket.Connect(ctx, socket.Connection{
		Dir: b.dir, Read: read, HeldWait: lockedRetry,
		Missing: func() error {
			dir, err := missingStore(b.c)
			if err != nil || dir != "" {
				return cmp.Or(err, noRuns(dir))
			}
			return nil
		},
		Database: func(context.Context) (host.Service, func(), error) { return viaDatabase(b.c, b.io) },
		Open: func(context.Context) (host.Service, func(), error) {
			kind := "mcp"
			if read {
				kind = "" // read-only beside other readers, as withService's
			}
			l, err := openHost(b.c, b.io, hostOptions{kind: kind, read: read})
			if err != nil {
				return nil, nil, err
			}
			if read {
				_, _ = control.RemoveStale(control.SocketPath(b.dir))
			}
			return l.Host, func() { _ = l.Close() }, nil
		},
	}, f)
}

// Status is one run as the host sees it.
func (b *mcpBackend) Status(ctx context.Context, runID string) (rs host.RunStatus, err error) {
	err = b.service(ctx, true, func(svc host.Service) error {
		rs, err = svc.Status(ctx, host.RunRequest{RunID: runID})
		return err
	})
	return rs, err
}

// List is every run of the store; none without a store.
func (b *mcpBackend) List(ctx context.Context) (es []host.ListEntry, err error) {
	if dir, err := missingStore(b.c); err != nil || dir != "" {
		return nil, err
	}
	err = b.service(ctx, true, func(svc host.Service) error {
		es, err = svc.List(ctx, host.ListRequest{})
		return err
	})
	return es, err
}

// Cancel cancels the run through the service.
func (b *mcpBackend) Cancel(ctx context.Context, runID string) (out host.Outcome, err error) {
	err = b.service(ctx, false, func(svc host.Service) error {
		out, err = svc.Cancel(ctx, host.RunRequest{RunID: runID})
		return err
	})
	return out, err
}

// Diff writes the run's committed change.
func (b *mcpBackend) Diff(ctx context.Context, runID string, phase int, w io.Writer) error {
	return b.service(ctx, true, func(svc host.Service) error {
		return Diff(ctx, w, svc, host.DiffRequest{RunID: runID, Phase: phase, Repo: b.g.Repo})
	})
}

// Records writes phase n's Task Story records (StoryShow).
func (b *mcpBackend) Records(ctx context.Context, runID string, phase int, w io.Writer) error {
	rs, err := b.Status(ctx, runID)
	if err != nil {
		return err
	}
	repo, err := b.repo()
	if err != nil {
		return err
	}
	return StoryShow(ctx, w, repo, rs.Snapshot, phase, commandFormatter(b.g.Repo))
}

// Merge takes the run's branch into the current branch (host.GitOps.Merge).
func (b *mcpBackend) Merge(ctx context.Context, runID string, dryRun bool, w io.Writer) error {
	return b.service(ctx, true, func(svc host.Service) error {
		m, err := svc.Merge(ctx, host.MergeRequest{RunID: runID, DryRun: dryRun, Repo: b.g.Repo})
		if err != nil {
			return err
		}
		writeLines(w, m.Lines)
		return nil
	})
}

// Logs writes the run's agent sessions as gaffer logs prints them.
func (b *mcpBackend) Logs(ctx context.Context, runID string, phase int, w io.Writer) error {
	if _, err := b.Status(ctx, runID); err != nil {
		return err // an unknown run is said as status says it
	}
	dir, err := logsDir(b.c)
	if err != nil {
		return err
	}
	return LogsWith(ctx, w, dir, runID, phase, false, 200*time.Millisecond, holderRuns(b.c))
}

// FileAt is file p at commit rev of the repository.
func (b *mcpBackend) FileAt(ctx context.Context, rev, p string) ([]byte, bool, error) {
	repo, err := b.repo()
	if err != nil {
		return nil, false, err
	}
	return repo.FileAt(ctx, rev, p)
}

func (b *mcpBackend) repo() (*workspace.Repo, error) {
	repo, err := workspace.Open(b.g.Repo)
	if err != nil {
		return nil, exitf(ExitPrecondition, "open repository %s: %w", b.g.Repo, err)
	}
	return repo, nil
}

// Answer gives the answer to the process that holds the store (serve, or
// the run asking at its terminal); with none, a detached `gaffer approve`
// (or reject) takes it and drives the run on, outliving this server.
func (b *mcpBackend) Answer(ctx context.Context, req host.AnswerRequest) (host.Outcome, error) {
	if err := req.Check(); err != nil {
		return host.Outcome{}, err
	}
	if out, done, err := b.viaHolder(ctx, func(svc host.Service) (host.Outcome, error) { return svc.Answer(ctx, req) }); done {
		return out, err
	}
	rs, err := b.Status(ctx, req.RunID)
	if err != nil {
		return host.Outcome{}, err
	}
	if rs.Status != "awaiting_approval" {
		return host.Outcome{}, &host.Error{Code: host.Refused, Err: fmt.Errorf("run %s is %s: it waits for no answer (run_status shows it)", req.RunID, rs.Status)}
	}
	args := []string{"approve", req.RunID}
	switch req.Verdict {
	case host.Reject:
		args = []string{"reject", req.RunID}
	case host.Retry, host.Stop, host.Skip:
		args = append(args, "--decision", req.Verdict.String())
	}
	if req.Feedback != "" {
		args = append(args, "--feedback", req.Feedback)
	}
	verb := host.AnswerVerb(req.Answer())
	pid, status, err := b.detach(ctx, req.RunID, args, func(rs host.RunStatus) bool { return !rs.Pending && rs.Status != "awaiting_approval" })
	if err != nil {
		return host.Outcome{}, err
	}
	return host.Outcome{RunID: req.RunID, Kind: host.HandedOn,
		Message: fmt.Sprintf("%s; the run goes on in a detached gaffer process (pid %d), now %s", verb, pid, status)}, nil
}

// Start queues the run in the serve that holds the store, or starts it
// in a detached `gaffer run`: it outlives this server either way.
func (b *mcpBackend) Start(ctx context.Context, req mcpserve.StartRequest) (mcpserve.Started, error) {
	id := host.NewRunID(time.Now())
	spec := host.RunSpec{RunID: id, Goal: req.Goal, Driver: req.Driver, Model: req.Model, Script: req.Script,
		AutoApprove: req.AutoApprove, TrackerID: req.TrackerID, Profile: cmp.Or(req.Profile, b.g.Profile), Repo: b.g.Repo, Parallel: req.Parallel}
	if req.Plan != "" {
		f, err := mcpserve.WritePlan(b.dir, id, req.Plan)
		if err != nil {
			return mcpserve.Started{}, err
		}
		spec.PlanFile = f
	}
	if spec.Script != "" && !filepath.IsAbs(spec.Script) {
		spec.Script = filepath.Join(b.g.Repo, spec.Script)
	}
	started := mcpserve.Started{RunID: id, Branch: host.RunBranch(id)}
	if cl, err := socket.HolderAt(ctx, b.dir); err != nil {
		return started, err
	} else if cl != nil {
		info, err := cl.Ping(ctx)
		if err != nil {
			return started, err
		}
		if info.Kind != "serve" {
			return started, &host.Error{Code: host.Held, Err: fmt.Errorf("gaffer %s (pid %d) holds the store %s: wait for it to end, or run several at once: start `gaffer serve` and run_start queues each run there",
				info.Kind, info.PID, info.Store)}
		}
		if err := profile.CheckSubmit(b.g.Repo, &spec, b.io.getenv); err != nil {
			return started, err
		}
		endSpan := profile.SubmitSpan(ctx, b.g.Repo, &spec, b.io.getenv)
		out, err := cl.Submit(ctx, spec)
		endSpan(err)
		if err != nil {
			return started, err
		}
		started.RunID, started.Branch = out.RunID, host.RunBranch(out.RunID)
		started.Where, started.PID, started.Message = fmt.Sprintf("gaffer serve (pid %d)", info.PID), info.PID, out.Message
		if rs, err := cl.Status(ctx, host.RunRequest{RunID: out.RunID}); err == nil {
			started.Status = rs.Status
		}
		return started, nil
	}
	if hoststore.IsURL(b.g.Store) {
		svc, closeSvc, err := viaDatabase(b.c, b.io)
		if err != nil {
			return started, err
		}
		defer closeSvc()
		if err := profile.CheckSubmit(b.g.Repo, &spec, b.io.getenv); err != nil {
			return started, err
		}
		endSpan := profile.SubmitSpan(ctx, b.g.Repo, &spec, b.io.getenv)
		out, err := svc.Submit(ctx, spec)
		endSpan(err)
		started.Where, started.Message = "the database's gaffer serves", out.Message
		return started, err
	}
	args := []string{"run", "--run-id", id}
	for _, f := range []struct{ name, v string }{{"plan", spec.PlanFile}, {"goal", spec.Goal}, {"driver", spec.Driver}, {"model", spec.Model},
		{"script", spec.Script}, {"tracker-id", spec.TrackerID}, {"profile", spec.Profile}} {
		if f.v != "" {
			args = append(args, "--"+f.name, f.v)
		}
	}
	if spec.AutoApprove {
		args = append(args, "--auto-approve")
	}
	if spec.Parallel > 0 {
		args = append(args, "--parallel", strconv.Itoa(spec.Parallel))
	}
	pid, status, err := b.detach(ctx, id, args, func(rs host.RunStatus) bool { return !rs.Pending })
	if err != nil {
		return started, err
	}
	started.Status, started.Where, started.PID = status, fmt.Sprintf("a detached gaffer run (pid %d)", pid), pid
	started.WorkTree = filepath.Join(host.WorkTreesDir(b.dir), id)
	started.Message = fmt.Sprintf("run %s started on branch %s; run_wait follows it", id, started.Branch)
	return started, nil
}

// viaHolder calls f with the process holding the store, or the
// database's serves; done is false when neither is there.
func (b *mcpBackend) viaHolder(ctx context.Context, f func(host.Service) (host.Outcome, error)) (out host.Outcome, done bool, err error) {
	cl, err := socket.HolderAt(ctx, b.dir)
	if err != nil {
		return out, true, err
	}
	if cl != nil {
		out, err = f(cl)
		if !errors.Is(err, control.ErrNoServer) {
			return out, true, err
		}
	}
	if hoststore.IsURL(b.g.Store) {
		svc, closeSvc, err := viaDatabase(b.c, b.io)
		if err != nil || svc == nil {
			return out, true, err
		}
		defer closeSvc()
		out, err = f(svc)
		return out, true, err
	}
	return out, false, nil
}

// detachWait is how long a detached process has to take the store and
// say where run id is before the tool returns without knowing.
const detachWait = 60 * time.Second

// detach starts gaffer with args in a session of its own (it outlives
// this server and its client), its output in DIR.mcp/ID.log, and waits
// until it holds the store and run id's status is one moved accepts (a
// checkpoint past the one it was asked about), or it has ended. A process that ended with an error is that
// error, told as its last line said it.
func (b *mcpBackend) detach(ctx context.Context, id string, args []string, moved func(host.RunStatus) bool) (pid int, status string, err error) {
	b.mu.Lock()
	locked := true
	defer func() {
		if locked {
			b.mu.Unlock()
		}
	}()
	dir := mcpserve.FilesDir(b.dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, "", fmt.Errorf("gaffer mcp: %w", err)
	}
	logPath := filepath.Join(dir, id+"."+args[0]+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, "", fmt.Errorf("gaffer mcp: %w", err)
	}
	defer logf.Close()
	globals := []string{"--repo", b.g.Repo}
	if b.set {
		globals = append(globals, "--store", b.g.Store)
	}
	cmd := exec.Command(b.exe, append(globals, args...)...)
	cmd.Dir = b.g.Repo
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, "", fmt.Errorf("gaffer mcp: start %s: %w", args[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid = cmd.Process.Pid
	deadline := time.NewTimer(detachWait)
	defer deadline.Stop()
	tick := time.NewTicker(b.poll)
	defer tick.Stop()
	for {
		select {
		case werr := <-exited:
			b.mu.Unlock()
			locked = false
			// A run that stopped to wait for approval, or halted, ends its
			// process with an exit code too: the store says what happened.
			rs, err := b.Status(ctx, id)
			if err == nil && moved(rs) {
				return pid, rs.Status, nil
			}
			if werr != nil {
				return pid, "", fmt.Errorf("gaffer %s for run %s failed: %s", args[0], id, lastLine(logPath))
			}
			return pid, rs.Status, err
		case <-ctx.Done():
			return pid, "", fmt.Errorf("gaffer %s for run %s goes on in pid %d (output in %s): %w", args[0], id, pid, logPath, ctx.Err())
		case <-deadline.C:
			return pid, "starting", nil
		case <-tick.C:
		}
		cl, err := socket.HolderAt(ctx, b.dir)
		if err != nil || cl == nil {
			continue
		}
		if rs, err := cl.Status(ctx, host.RunRequest{RunID: id}); err == nil && moved(rs) {
			return pid, rs.Status, nil
		}
	}
}

// lastLine is the last line of the file at p that says something: a
// gaffer command's error.
func lastLine(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
