package mcpserve

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/host"
)

// Backend is what the server needs of gaffer. The command line implements
// it with host.Service (cli/mcp.go); every error it returns is told to
// the model as a tool error.
type Backend interface {
	// Status is one run as the host sees it.
	Status(ctx context.Context, runID string) (host.RunStatus, error)
	// List is every run of the store, newest first.
	List(ctx context.Context) ([]host.ListEntry, error)
	// Start starts a run that outlives the server: queued in a running
	// serve, or driven by a detached gaffer process.
	Start(ctx context.Context, req StartRequest) (Started, error)
	// Answer answers what a run waits for; the run continues where it
	// outlives the server.
	Answer(ctx context.Context, req host.AnswerRequest) (host.Outcome, error)
	// Cancel ends an unfinished run for good.
	Cancel(ctx context.Context, runID string) (host.Outcome, error)
	// Diff writes the run's committed change (phase n, or every phase for
	// 0) to w.
	Diff(ctx context.Context, runID string, phase int, w io.Writer) error
	// Merge takes a finished run's branch into the user's current branch,
	// or with dryRun says what that would do; it says what it did on w.
	Merge(ctx context.Context, runID string, dryRun bool, w io.Writer) error
	// Logs writes the run's agent sessions (phase n, 0 the architect's,
	// -1 every phase) to w.
	Logs(ctx context.Context, runID string, phase int, w io.Writer) error
	// FileAt is the file p of the repository at commit rev; false when
	// it is not there.
	FileAt(ctx context.Context, rev, p string) ([]byte, bool, error)
	// Records writes phase n's full Task Story records to w, as gaffer
	// story show prints them (the text expand_context returns).
	Records(ctx context.Context, runID string, phase int, w io.Writer) error
}

// StartRequest is a run to start (run_start's arguments).
type StartRequest struct {
	Plan        string // the plan's text; "" with Goal
	Goal        string // what to build (the architect writes the plan)
	Profile     string
	Driver      string
	Model       string
	Script      string // the script driver's file
	AutoApprove bool
	TrackerID   string
	Parallel    int // lanes of a phase at once; 0 takes the profile's
}

// Started is a run that was started.
type Started struct {
	RunID    string `json:"run_id"`
	Branch   string `json:"branch,omitempty" jsonschema:"the run's own branch, where its phases are committed"`
	WorkTree string `json:"work_tree,omitempty" jsonschema:"the run's own work tree, where its agents work"`
	Where    string `json:"where" jsonschema:"the process that drives the run: a serve, or a detached gaffer run"`
	PID      int    `json:"pid,omitempty" jsonschema:"that process's id"`
	Status   string `json:"status,omitempty" jsonschema:"the run's status when the tool returned"`
	Message  string `json:"message"`
}

// Config makes a Server.
type Config struct {
	// Backend does the runs' operations.
	Backend Backend
	// Version is gaffer's version, told to the client.
	Version string
	// Poll is how often run_wait reads a run's status; 0: 250ms.
	Poll time.Duration
	// Logger logs the protocol's errors; nil discards.
	Logger *slog.Logger
}

// validate fills in the defaults and rejects a config without a Backend.
func (c *Config) validate() error {
	if c.Backend == nil {
		return ErrNoBackend
	}
	if c.Poll <= 0 {
		c.Poll = 250 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	return nil
}

// Server is gaffer's MCP server: its tools and resources over a
// transport.
type Server struct {
	cfg Config
	mcp *mcp.Server
}

// New makes the Server of cfg, with every tool and resource added.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "gaffer", Title: "gaffer", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       cfg.Logger,
	})
	if err := s.addTools(); err != nil {
		return nil, err
	}
	s.addResources()
	return s, nil
}

// instructions tell the client's model what the server is for.
const instructions = "gaffer runs coding-agent work as a durable plan of phases, each reviewed and committed on the run's own branch. " +
	"Check a plan with plan_validate, start a run with run_start, follow it with run_wait or run_status, " +
	"approve or reject its plan with run_approve or run_reject, answer recovery's question with run_answer, " +
	"read its work with run_diff and run_logs, and take a finished run's branch with run_merge (dry_run first)."

// Run serves one client over t until it disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// ServeStdio serves one client over standard input and output until it
// disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.Run(ctx, &mcp.StdioTransport{})
}

// Handler serves clients over Streamable HTTP. It has no checks of its
// own: the caller wraps it with the inbox's (inbox.Guard).
func (s *Server) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.cfg.Logger,
	})
}
