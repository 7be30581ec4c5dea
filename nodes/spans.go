package nodes

import (
	"context"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/events"
	"github.com/gaffer-dev/gaffer/graph"
)

// toolFailed is a failed tool call's Error in tool_call: the tool's
// output is the agent's conversation, which no event carries.
const toolFailed = "the tool reported an error"

// callTimer turns one session's messages into model_call and tool_call
// events with their times. A driver streams a model call's text, tool
// calls and usage as the response arrives, then each tool's result as it
// finishes; so a model call runs from the session's start or the last
// tool result to the first message of its response, and a tool from the
// message before its result to the result.
type callTimer struct {
	ctx   context.Context
	s     agent.Session
	clock func() time.Time
	mark  time.Time // where the next model call starts
	resp  time.Time // the first message of the response under way, or zero
	last  time.Time // the last message
}

func (c *callTimer) message(m agent.Message) {
	now := c.clock()
	switch m.Kind {
	case agent.Text, agent.ToolCall:
		if c.resp.IsZero() {
			c.resp = now
		}
	case agent.UsageUpdate:
		end := c.resp
		if end.IsZero() {
			end = now
		}
		graph.Emit(c.ctx, events.EventModelCall, events.ModelCall{
			Role: string(c.s.Role), Phase: c.s.Phase, Lane: c.s.Lane, Model: c.s.Model,
			InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
			Start: c.mark, Duration: max(end.Sub(c.mark), 0),
		})
		c.resp, c.mark = time.Time{}, now
	case agent.ToolResult:
		ev := events.ToolCall{Role: string(c.s.Role), Phase: c.s.Phase, Lane: c.s.Lane, Tool: m.Tool,
			Start: c.last, Duration: max(now.Sub(c.last), 0)}
		if m.IsError {
			ev.Error = toolFailed
		}
		graph.Emit(c.ctx, events.EventToolCall, ev)
		c.resp, c.mark = time.Time{}, now
	}
	c.last = now
}

// withCalls returns s emitting model_call and tool_call (callTimer) for
// its messages, then passing them on to its own OnMessage.
func (w *workflow) withCalls(ctx context.Context, s agent.Session) agent.Session {
	start := w.cfg.Clock()
	c := &callTimer{ctx: ctx, s: s, clock: w.cfg.Clock, mark: start, last: start}
	next := s.OnMessage
	s.OnMessage = func(m agent.Message) {
		c.message(m)
		if next != nil {
			next(m)
		}
	}
	return s
}

// gitWork runs fn, one piece of git work (an events.Git constant) of
// phase and lane, and emits git_work with its time and error.
func (w *workflow) gitWork(ctx context.Context, phase, lane int, op string, fn func() error) error {
	start := w.cfg.Clock()
	err := fn()
	ev := events.GitWork{Phase: phase, Lane: lane, Op: op, Start: start, Duration: max(w.cfg.Clock().Sub(start), 0)}
	if err != nil {
		ev.Error, _, _ = strings.Cut(err.Error(), "\n")
	}
	graph.Emit(ctx, events.EventGitWork, ev)
	return err
}
