package llm

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/state"
)

// Provider names the kind of endpoint an Driver talks to.
type Provider string

// The providers of the llm driver.
const (
	// ProviderOpenAI is any OpenAI-compatible chat completions endpoint:
	// OpenAI, OpenRouter, vLLM, llama.cpp's server, Ollama's /v1.
	ProviderOpenAI Provider = "openai"
	// ProviderAnthropic is Anthropic's Messages API.
	ProviderAnthropic Provider = "anthropic"
	// ProviderOllama is a local Ollama server. langchaingo's native Ollama
	// client (v0.1.14) does not pass tools to the model, so the driver talks
	// to Ollama's OpenAI-compatible endpoint (BaseURL defaults to
	// http://localhost:11434/v1) and needs no API key.
	ProviderOllama Provider = "ollama"
)

// String returns the provider's name.
func (p Provider) String() string { return string(p) }

// Defaults for Config.
const (
	DefaultMaxTurns        = 60
	DefaultTokenBudget     = 2_000_000
	DefaultMaxOutputTokens = 8192
	// DefaultModelAttempts is how many times one model call is tried.
	DefaultModelAttempts = 4
	// DefaultCallTimeout bounds one model call: the request and its whole
	// answer.
	DefaultCallTimeout = 5 * time.Minute
)

// Config configures an Driver. Provider and a model (Model or an entry
// of Models for every role used) are required; the rest has defaults.
type Config struct {
	Provider Provider
	// BaseURL is the endpoint, including the API version path:
	// "https://openrouter.ai/api/v1", "http://127.0.0.1:8000/v1". "" means
	// the provider's own (https://api.openai.com/v1,
	// https://api.anthropic.com/v1, http://localhost:11434/v1).
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key, read
	// once by NewDriver. "" means OPENAI_API_KEY or ANTHROPIC_API_KEY;
	// Ollama needs no key. The key is sent only to BaseURL: it is kept out
	// of commands' environment, messages, reports and errors.
	APIKeyEnv string
	// Model is the model for roles that Models does not name.
	Model string
	// Models picks a model per role, e.g. a cheaper one for the evaluator.
	Models map[agent.Role]string
	// MaxTurns bounds the model calls of one Run; 0 means DefaultMaxTurns.
	MaxTurns int
	// TokenBudget bounds the input plus output tokens of one Run, checked
	// after each model call: going over it ends the session failed (its
	// Output kept when the model had already answered). 0 means
	// DefaultTokenBudget.
	TokenBudget int
	// MaxOutputTokens bounds each Anthropic reply (the API requires a
	// bound); 0 means DefaultMaxOutputTokens. OpenAI-compatible endpoints
	// use their own default.
	MaxOutputTokens int
	// Prices maps a model's name to its price; a model not in it costs 0.
	Prices map[string]state.Price
	// MaxAttempts bounds the tries of one model call on rate limits (429),
	// server errors (5xx) and transport errors (no answer within
	// CallTimeout among them); 0 means DefaultModelAttempts.
	MaxAttempts int
	// CallTimeout bounds one model call, the request and its whole answer;
	// a call that outlives it is tried again, like a transport error. 0
	// means DefaultCallTimeout.
	CallTimeout time.Duration
	// SessionTimeout bounds one Run's wall time; 0 means none (MaxTurns
	// and TokenBudget still bound it). Reached while the model is being
	// called, it is the provider's fault: Run returns an error wrapping
	// agent.ErrUnavailable. Reached while a tool runs, the session ends
	// failed.
	SessionTimeout time.Duration
	// Limits sets MaxAttempts, CallTimeout and SessionTimeout per role; a
	// role's zero field takes the Config's.
	Limits map[agent.Role]RoleLimits
	// HTTPClient sends the requests; nil means a client without a timeout
	// of its own (CallTimeout bounds each call).
	HTTPClient *http.Client
	// Sleep waits between attempts; nil means a timer that ends early with
	// ctx. Tests pass one that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Toolbox configures the file and command tools (command timeout,
	// output kept).
	Toolbox agent.ToolboxOptions
}

// RoleLimits are one role's bounds on its model calls and sessions; a
// zero field takes the Config's.
type RoleLimits struct {
	CallTimeout    time.Duration `json:"call_timeout,omitempty"`
	MaxAttempts    int           `json:"max_attempts,omitempty"`
	SessionTimeout time.Duration `json:"session_timeout,omitempty"`
}

// limits returns role r's bounds, the Config's where Limits gives none.
func (c Config) limits(r agent.Role) RoleLimits {
	l := c.Limits[r]
	if l.CallTimeout <= 0 {
		l.CallTimeout = c.CallTimeout
	}
	if l.MaxAttempts <= 0 {
		l.MaxAttempts = c.MaxAttempts
	}
	if l.SessionTimeout <= 0 {
		l.SessionTimeout = c.SessionTimeout
	}
	return l
}

// validate fills in the defaults and rejects nonsense.
func (c Config) validate() (Config, error) {
	switch c.Provider {
	case ProviderOpenAI, ProviderAnthropic, ProviderOllama:
	case "":
		return c, fmt.Errorf("agent: llm config: no provider (want openai, anthropic or ollama)")
	default:
		return c, fmt.Errorf("agent: llm config: unknown provider %q (want openai, anthropic or ollama)", c.Provider)
	}
	if c.Model == "" && len(c.Models) == 0 {
		return c, fmt.Errorf("agent: llm config: no model")
	}
	for r, m := range c.Models {
		if !r.Valid() {
			return c, fmt.Errorf("agent: llm config: model for %w %q", agent.ErrUnknownRole, r)
		}
		if m == "" {
			return c, fmt.Errorf("agent: llm config: empty model for role %s", r)
		}
	}
	if c.MaxTurns < 0 || c.TokenBudget < 0 || c.MaxOutputTokens < 0 || c.MaxAttempts < 0 || c.CallTimeout < 0 || c.SessionTimeout < 0 {
		return c, fmt.Errorf("agent: llm config: negative limit")
	}
	for r, l := range c.Limits {
		if !r.Valid() {
			return c, fmt.Errorf("agent: llm config: limits for %w %q", agent.ErrUnknownRole, r)
		}
		if l.CallTimeout < 0 || l.MaxAttempts < 0 || l.SessionTimeout < 0 {
			return c, fmt.Errorf("agent: llm config: negative limit for role %s", r)
		}
	}
	for m, p := range c.Prices {
		if p.Input < 0 || p.Output < 0 || p.Cached < 0 {
			return c, fmt.Errorf("agent: llm config: negative price for model %q", m)
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = map[Provider]string{
			ProviderOpenAI:    "https://api.openai.com/v1",
			ProviderAnthropic: "https://api.anthropic.com/v1",
			ProviderOllama:    "http://localhost:11434/v1",
		}[c.Provider]
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = map[Provider]string{ProviderOpenAI: "OPENAI_API_KEY", ProviderAnthropic: "ANTHROPIC_API_KEY"}[c.Provider]
	}
	c.MaxTurns = cmpOr(c.MaxTurns, DefaultMaxTurns)
	c.TokenBudget = cmpOr(c.TokenBudget, DefaultTokenBudget)
	c.MaxOutputTokens = cmpOr(c.MaxOutputTokens, DefaultMaxOutputTokens)
	c.MaxAttempts = cmpOr(c.MaxAttempts, DefaultModelAttempts)
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	return c, nil
}

// cmpOr returns v, or def when v is 0.
func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Driver is the Driver that runs sessions with a language model through
// langchaingo: a loop in which the model calls tools (read, write, edit,
// list, grep, run a command, git diff and status), confined to Session.Dir
// by a Toolbox and limited to Session.Tools, until it answers with text
// only. That final text is Report.Output: the architect's plan, the
// reviewer's or evaluator's JSON, the developer's summary.
//
// A session's conversation is kept in memory by the driver under the
// Report's SessionID, so a later Run with that SessionID continues it (a
// follow-up prompt, a review's comments). Conversations do not survive the
// process: after a restart a SessionID the driver does not know starts a
// fresh conversation under that id.
//
// Limits end a session as a failed Report, not an error: MaxTurns model
// calls, TokenBudget tokens. Rate limits and server errors are retried with
// backoff; a refused key is ErrAuth, other lasting model failures ErrModel.
// An Driver is safe for concurrent use.
type Driver struct {
	cfg Config
	key string

	mu       sync.Mutex
	sessions map[string]*llmSession
	seq      int
}

var _ agent.Driver = (*Driver)(nil)

// llmSession is one conversation. Its mutex is held by the Run using it.
type llmSession struct {
	mu      sync.Mutex
	history []llms.MessageContent
}

// NewDriver checks cfg, reads the API key from the environment and
// returns the driver. A missing key is ErrMissingKey, naming the variable.
func NewDriver(cfg Config) (*Driver, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	var key string
	if cfg.APIKeyEnv != "" {
		key = strings.TrimSpace(cfg.Getenv(cfg.APIKeyEnv))
		if key == "" && cfg.Provider != ProviderOllama {
			return nil, fmt.Errorf("%w: set the environment variable %s", agent.ErrMissingKey, cfg.APIKeyEnv)
		}
	}
	if cfg.Toolbox.Env == nil {
		cfg.Toolbox.Env = os.Environ()
	}
	cfg.Toolbox.Env = environ.Without(cfg.Toolbox.Env, cfg.APIKeyEnv)
	return &Driver{cfg: cfg, key: key, sessions: map[string]*llmSession{}}, nil
}

// ModelFor returns the model the driver uses for role r.
func (d *Driver) ModelFor(r agent.Role) string {
	if m := d.cfg.Models[r]; m != "" {
		return m
	}
	return d.cfg.Model
}

// Run runs session s: a fresh conversation, or the continuation of
// s.SessionID's with s.Prompt as the next user message.
func (d *Driver) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	if !s.Role.Valid() {
		return agent.Report{}, fmt.Errorf("%w %q", agent.ErrUnknownRole, s.Role)
	}
	model := d.ModelFor(s.Role)
	if s.Model != "" {
		model = s.Model
	}
	if model == "" {
		return agent.Report{}, fmt.Errorf("agent: llm config: no model for role %s", s.Role)
	}
	if err := ctx.Err(); err != nil {
		return agent.Report{}, fmt.Errorf("agent: llm %s session stopped: %w", s.Role, err)
	}
	tb, err := agent.NewToolbox(s.Dir, d.cfg.Toolbox)
	if err != nil {
		return agent.Report{}, err
	}
	defer tb.Close()
	id, sess := d.session(s)
	sess.mu.Lock()
	defer sess.mu.Unlock()
	l := &loop{d: d, s: s, tb: tb, model: model, id: id, sess: sess, limits: d.cfg.limits(s.Role)}
	if t := l.limits.SessionTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, errSessionTimeout)
		defer cancel()
	}
	rep, err := l.run(ctx)
	return d.redactReport(rep), d.redactErr(err)
}

// Forget drops the conversation kept for sessionID, when the workflow is
// done with it; a later Run with that id starts afresh.
func (d *Driver) Forget(sessionID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.sessions, sessionID)
}

// session returns the conversation for s, making a new one when s has no
// SessionID or one the driver does not know.
func (d *Driver) session(s agent.Session) (string, *llmSession) {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := s.SessionID
	if id == "" {
		d.seq++
		id = fmt.Sprintf("llm-%s-%s-p%d-a%d-%d", s.RunID, s.Role, s.Phase, s.Attempt, d.seq)
	}
	sess, ok := d.sessions[id]
	if !ok {
		sess = &llmSession{}
		d.sessions[id] = sess
	}
	return id, sess
}

// newModel returns a langchaingo model for one call that sends its requests
// through doer.
func (d *Driver) newModel(doer *statusDoer, model string) (llms.Model, error) {
	switch d.cfg.Provider {
	case ProviderAnthropic:
		return anthropic.New(anthropic.WithToken(d.key), anthropic.WithBaseURL(d.cfg.BaseURL),
			anthropic.WithModel(model), anthropic.WithHTTPClient(doer))
	default:
		key := d.key
		if key == "" {
			key = "ollama" // the client insists on a token; Ollama ignores it
		}
		return openai.New(openai.WithToken(key), openai.WithBaseURL(d.cfg.BaseURL),
			openai.WithModel(model), openai.WithHTTPClient(doer))
	}
}

// statusDoer sends requests with an http.Client and keeps the status and
// Retry-After of the last response, which langchaingo's errors do not
// carry.
type statusDoer struct {
	c          *http.Client
	status     int
	retryAfter time.Duration
}

// Do sends r.
func (s *statusDoer) Do(r *http.Request) (*http.Response, error) {
	resp, err := s.c.Do(r)
	if resp != nil {
		s.status = resp.StatusCode
		s.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After header given in seconds; 0 when
// absent or in another form.
func parseRetryAfter(v string) time.Duration {
	var secs int
	if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &secs); err != nil || secs < 0 {
		return 0
	}
	return min(time.Duration(secs)*time.Second, 2*time.Minute)
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redact replaces the API key in s.
func (d *Driver) redact(s string) string {
	if d.key == "" || len(d.key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, d.key, "[redacted]")
}

// redactReport returns rep with the API key replaced in its texts.
func (d *Driver) redactReport(rep agent.Report) agent.Report {
	rep.Summary, rep.Output, rep.Error = d.redact(rep.Summary), d.redact(rep.Output), d.redact(rep.Error)
	return rep
}

// redactErr returns err with the API key replaced in its text; errors.Is and
// errors.As still see the original.
func (d *Driver) redactErr(err error) error {
	if err == nil || d.key == "" || !strings.Contains(err.Error(), d.key) {
		return err
	}
	return &redactedError{msg: d.redact(err.Error()), err: err}
}

// redactedError shows a redacted text and unwraps to the original error.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
