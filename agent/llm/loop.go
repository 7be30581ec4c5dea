package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/changes"
	"github.com/gaffer-dev/gaffer/agent/internal/short"
	"github.com/gaffer-dev/gaffer/state"
)

// loop is one Run of an Driver session.
type loop struct {
	d       *Driver
	s       agent.Session
	tb      *agent.Toolbox
	model   string
	id      string
	sess    *llmSession
	limits  RoleLimits // the role's call timeout, attempts, session timeout
	usage   state.Usage
	changed changes.Set
	// expansions counts expand_context calls by phase (at most
	// maxExpansions each).
	expansions expansions
}

// run plays the conversation until the model answers without tools, a
// limit is reached, or a model call fails for good.
func (l *loop) run(ctx context.Context) (agent.Report, error) {
	hist := append([]llms.MessageContent(nil), l.sess.history...)
	if len(hist) == 0 {
		hist = append(hist, llms.TextParts(llms.ChatMessageTypeSystem, systemPrompt(l.s.Role)))
	}
	hist = append(hist, llms.TextParts(llms.ChatMessageTypeHuman, l.s.Prompt))
	tools := l.tools()
	rep := agent.Report{SessionID: l.id}
	failed := func(msg string) (agent.Report, error) {
		rep.Status, rep.Error, rep.Summary = agent.StatusFailed, msg, short.FirstLine(msg)
		rep.Expansions = l.expansions.total()
		rep.Usage, rep.FilesChanged = l.usage, l.changed.List()
		return rep, nil
	}
	stopped := func(err error) (agent.Report, error) {
		rep.Status, rep.Error = agent.StatusFailed, err.Error()
		rep.Expansions = l.expansions.total()
		rep.Usage, rep.FilesChanged = l.usage, l.changed.List()
		return rep, err
	}
	for turn := 1; ; turn++ {
		if turn > l.d.cfg.MaxTurns {
			return failed(fmt.Sprintf("the turn limit of %d model calls was reached before the agent finished", l.d.cfg.MaxTurns))
		}
		if sessionTimedOut(ctx) {
			// Its tools ran out the time: the agent's doing, not the
			// provider's.
			return failed(fmt.Sprintf("the session limit of %v was reached while the agent's tools ran, before it finished", l.limits.SessionTimeout))
		}
		resp, err := l.call(ctx, hist, tools)
		if err != nil {
			return stopped(err)
		}
		text, calls := l.receive(resp)
		hist = append(hist, assistantMessages(l.d.cfg.Provider, text, calls)...)
		if len(calls) == 0 {
			l.sess.history = hist
			rep.Status, rep.Output = agent.StatusCompleted, text
			rep.Summary = short.FirstLine(text)
			if l.s.Role == agent.RoleDeveloper {
				rep.Story, _ = agent.ParseFacts(text)
			}
			rep.Usage, rep.FilesChanged = l.usage, l.changed.List()
			rep.Expansions = l.expansions.total()
			if used := l.usage.InputTokens + l.usage.OutputTokens; used > l.d.cfg.TokenBudget {
				return failed(fmt.Sprintf("the token budget of %d was used up (%d tokens)", l.d.cfg.TokenBudget, used))
			}
			return rep, nil
		}
		for _, c := range calls {
			res, isErr, err := l.callTool(ctx, c)
			if err != nil && sessionTimedOut(ctx) {
				return failed(fmt.Sprintf("the session limit of %v was reached while the agent's tool %s ran, before it finished", l.limits.SessionTimeout, c.FunctionCall.Name))
			}
			if err != nil {
				return stopped(fmt.Errorf("agent: llm %s session stopped: %w", l.s.Role, err))
			}
			res = l.d.redact(res)
			l.s.Emit(agent.Message{Kind: agent.ToolResult, Tool: c.FunctionCall.Name, Text: res, IsError: isErr})
			hist = append(hist, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: c.ID, Name: c.FunctionCall.Name, Content: res},
			}})
		}
		l.sess.history = hist
		if used := l.usage.InputTokens + l.usage.OutputTokens; used > l.d.cfg.TokenBudget {
			return failed(fmt.Sprintf("the token budget of %d was used up (%d tokens) before the agent finished", l.d.cfg.TokenBudget, used))
		}
	}
}

// receive streams a response's text, tool calls and usage, adds the usage
// to the session's, and returns the text and the calls.
func (l *loop) receive(resp *llms.ContentResponse) (string, []llms.ToolCall) {
	var texts []string
	var calls []llms.ToolCall
	for _, ch := range resp.Choices {
		if t := strings.TrimSpace(ch.Content); t != "" {
			texts = append(texts, ch.Content)
		}
		for _, c := range ch.ToolCalls {
			if c.FunctionCall != nil {
				calls = append(calls, c)
			}
		}
	}
	text := strings.Join(texts, "\n")
	if text != "" {
		l.s.Emit(agent.Message{Kind: agent.Text, Text: l.d.redact(text)})
	}
	for i, c := range calls {
		if c.ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d", i+1)
		}
		l.s.Emit(agent.Message{Kind: agent.ToolCall, Tool: c.FunctionCall.Name, Input: l.d.redact(c.FunctionCall.Arguments),
			Text: l.d.redact(c.FunctionCall.Name + " " + c.FunctionCall.Arguments)})
	}
	u := usageOf(resp)
	if p, ok := l.d.cfg.Prices[l.model]; ok {
		u.CostUSD = p.Cost(u)
	}
	l.usage = l.usage.Add(u)
	l.s.Emit(agent.Message{Kind: agent.UsageUpdate, Usage: u})
	return text, calls
}

// call makes one model call, retrying rate limits, server and transport
// errors with backoff.
func (l *loop) call(ctx context.Context, hist []llms.MessageContent, tools []llms.Tool) (*llms.ContentResponse, error) {
	cfg := l.d.cfg
	opts := []llms.CallOption{llms.WithModel(l.model), llms.WithTools(tools)}
	if cfg.Provider == ProviderAnthropic {
		opts = append(opts, llms.WithMaxTokens(cfg.MaxOutputTokens))
	}
	var last error
	unavailable := false // the last failure was the provider's: 429, 5xx, no answer
	attempts := l.limits.MaxAttempts
	for attempt := 1; attempt <= attempts; attempt++ {
		doer := &statusDoer{c: cfg.HTTPClient}
		m, err := l.d.newModel(doer, l.model)
		if err != nil {
			return nil, fmt.Errorf("%w: %s client: %w", agent.ErrModel, cfg.Provider, err)
		}
		callCtx, cancel := context.WithTimeoutCause(ctx, l.limits.CallTimeout, errCallTimeout)
		resp, err := m.GenerateContent(callCtx, hist, opts...)
		callTimedOut := context.Cause(callCtx) == errCallTimeout
		cancel()
		if err == nil && resp != nil && len(resp.Choices) > 0 {
			return resp, nil
		}
		if err == nil {
			err = errors.New("the response has no choices")
		}
		if ctx.Err() != nil {
			return nil, l.stoppedWaiting(ctx, attempt, ctx.Err())
		}
		if callTimedOut {
			err = fmt.Errorf("no answer within the call timeout of %v", l.limits.CallTimeout)
		}
		switch st := doer.status; {
		case st == 401 || st == 403:
			return nil, fmt.Errorf("%w: %s at %s answered %d; check the key in %s", agent.ErrAuth, cfg.Provider, cfg.BaseURL, st, keyVar(cfg))
		case st == 429 || st >= 500 || st == 0 || st == 200:
			// Retry: rate limited, server trouble, no answer, or an answer
			// that could not be read.
			last = fmt.Errorf("%w: %s model %s: %w", agent.ErrModel, cfg.Provider, l.model, err)
			unavailable = st != 200 || callTimedOut // an answer begun and never finished is no answer
		default:
			return nil, fmt.Errorf("%w: %s model %s answered %d: %w", agent.ErrModel, cfg.Provider, l.model, st, err)
		}
		if attempt == attempts {
			break
		}
		wait := backoff(attempt)
		if doer.retryAfter > 0 {
			wait = doer.retryAfter
		}
		if err := cfg.Sleep(ctx, wait); err != nil {
			return nil, l.stoppedWaiting(ctx, attempt, err)
		}
	}
	if unavailable {
		return nil, fmt.Errorf("%w after %d attempts: %w", agent.ErrUnavailable, attempts, last)
	}
	return nil, fmt.Errorf("after %d attempts: %w", attempts, last)
}

// Causes of a model call's and a session's context ending.
var (
	errCallTimeout    = errors.New("the model call timed out")
	errSessionTimeout = errors.New("the session timed out")
)

// sessionTimedOut reports whether ctx, a Run's, ended because the session
// timeout was reached.
func sessionTimedOut(ctx context.Context) bool {
	return ctx.Err() != nil && context.Cause(ctx) == errSessionTimeout
}

// stoppedWaiting is the error of a model call that ended with err (ctx's,
// or the wait's between tries) after attempt tries: the session timeout
// reached while waiting for the provider is the provider's fault
// (agent.ErrUnavailable); otherwise the session was stopped.
func (l *loop) stoppedWaiting(ctx context.Context, attempt int, err error) error {
	if sessionTimedOut(ctx) {
		return fmt.Errorf("%w: the %s session's limit of %v was reached waiting for %s model %s (attempt %d)",
			agent.ErrUnavailable, l.s.Role, l.limits.SessionTimeout, l.d.cfg.Provider, l.model, attempt)
	}
	return fmt.Errorf("agent: llm %s session stopped: %w", l.s.Role, err)
}

// keyVar names where the key came from, for error messages.
func keyVar(cfg Config) string {
	if cfg.APIKeyEnv == "" {
		return "the API key (none is configured)"
	}
	return cfg.APIKeyEnv
}

// backoff returns the wait before attempt+1: 1s, 2s, 4s, … up to 30s.
func backoff(attempt int) time.Duration {
	return min(time.Second<<min(attempt-1, 5), 30*time.Second)
}

// usageOf reads the tokens of a response from langchaingo's GenerationInfo,
// whose keys differ by provider. InputTokens counts all input tokens,
// cached or not; CachedTokens the part read from the cache.
func usageOf(resp *llms.ContentResponse) state.Usage {
	if len(resp.Choices) == 0 {
		return state.Usage{}
	}
	// Anthropic repeats the message's usage in the choice of every content
	// block; OpenAI has one choice. Either way the first choice has it.
	gi := resp.Choices[0].GenerationInfo
	if _, ok := gi["InputTokens"]; ok { // Anthropic: input_tokens excludes the cache
		read, created := intOf(gi["CacheReadInputTokens"]), intOf(gi["CacheCreationInputTokens"])
		return state.Usage{
			InputTokens:  intOf(gi["InputTokens"]) + read + created,
			OutputTokens: intOf(gi["OutputTokens"]),
			CachedTokens: read,
		}
	}
	return state.Usage{
		InputTokens:  intOf(gi["PromptTokens"]),
		OutputTokens: intOf(gi["CompletionTokens"]),
		CachedTokens: intOf(gi["PromptCachedTokens"]),
	}
}

// intOf converts a GenerationInfo number.
func intOf(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int32:
		return int(n)
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// assistantMessages returns the history entries of a model's answer. The
// Anthropic client reads only the first part of an assistant message, so
// there each text and tool call is a message of its own (the API joins
// consecutive messages of one role).
func assistantMessages(p Provider, text string, calls []llms.ToolCall) []llms.MessageContent {
	var parts []llms.ContentPart
	if text != "" {
		parts = append(parts, llms.TextContent{Text: text})
	}
	for _, c := range calls {
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		parts = append(parts, llms.TextContent{Text: "(no answer)"})
	}
	if p != ProviderAnthropic {
		return []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: parts}}
	}
	out := make([]llms.MessageContent, len(parts))
	for i, part := range parts {
		out[i] = llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{part}}
	}
	return out
}

// taskTypes is the system prompt's word on task types, for the developer
// and the reviewer (seeds 000 and 002): the prompt says which type each
// task has.
const taskTypes = "A task may have a type. A test task writes tests that fail for the missing behaviour: " +
	"that failure is expected, and the tests must not be implemented around. An impl task makes the named tests " +
	"pass without changing them. A refactor task leaves behaviour and tests unchanged."

// systemPrompt is the system message of a fresh session.
func systemPrompt(r agent.Role) string {
	var answer string
	switch r {
	case agent.RoleArchitect:
		answer = "When you are done, answer with the plan as markdown and nothing else."
	case agent.RoleReviewer:
		answer = taskTypes + " Judge a test task by the quality of its tests, not by their passing. " +
			`When you are done, answer with one JSON object {"approved": bool, "comments": string, "items": [...]} and nothing else.`
	case agent.RoleEvaluator:
		answer = `When you are done, answer with one JSON object {"items": [...]} and nothing else.`
	case agent.RoleDoctor, agent.RoleReplanner:
		answer = "Change nothing. Answer with the one JSON object the prompt asks for and nothing else."
	default:
		answer = taskTypes + " When you are done, answer with a short summary of what you changed and how you checked it. " + agent.StoryInstructions
	}
	return fmt.Sprintf("You are the %s agent of a coding workflow, working in a git repository. "+
		"Use the tools to look at and change files; paths are relative to the repository root, "+
		"and nothing outside it can be read or changed. Commands run in the repository root. "+
		"Do not commit: the workflow does. %s", r, answer)
}
