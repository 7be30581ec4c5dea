package nodes

import (
	"context"
	"encoding/json"
	"fmt"
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
	// content, when set, keeps each model call's prompt and completion
	// for its event (Config.TraceContent).
	content *callContent
}

// callContent is what a session sent and received since its last model
// call, redacted and bounded, in the GenAI semantic conventions' shapes
// (gen_ai.input.messages, gen_ai.output.messages).
type callContent struct {
	redact func(string) string
	input  []genAIMessage
	output []genAIPart
}

// genAIMessage is one message of gen_ai.input.messages or
// gen_ai.output.messages.
type genAIMessage struct {
	Role         string      `json:"role"`
	Parts        []genAIPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

// genAIPart is one part of a message: text, a tool call or a tool's
// response.
type genAIPart struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Response  string `json:"response,omitempty"`
}

// maxContentText is the longest text of one part a model call's content
// keeps, in bytes, as a transcript keeps of one message.
const maxContentText = 8 << 10

// text is s redacted, then cut to maxContentText at a rune boundary,
// saying how much was cut.
func (c *callContent) text(s string) string {
	s = c.redact(s)
	if len(s) <= maxContentText {
		return s
	}
	cut := maxContentText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s… [%d bytes cut]", s[:cut], len(s)-cut)
}

// prompt keeps a prompt the session is given: the next model call's.
func (c *callContent) prompt(p string) {
	c.input = append(c.input, genAIMessage{Role: "user", Parts: []genAIPart{{Type: "text", Content: c.text(p)}}})
}

// message keeps what m adds to the model calls' content.
func (c *callContent) message(m agent.Message) {
	switch m.Kind {
	case agent.Text:
		c.output = append(c.output, genAIPart{Type: "text", Content: c.text(m.Text)})
	case agent.ToolCall:
		c.output = append(c.output, genAIPart{Type: "tool_call", Name: m.Tool, Arguments: c.text(m.Input)})
	case agent.ToolResult:
		c.input = append(c.input, genAIMessage{Role: "tool", Parts: []genAIPart{{Type: "tool_call_response", Name: m.Tool, Response: c.text(m.Text)}}})
	}
}

// take returns the model call's content as JSON, input and output, and
// starts the next call's.
func (c *callContent) take() (in, out string) {
	finish := "stop"
	for _, p := range c.output {
		if p.Type == "tool_call" {
			finish = "tool_call"
		}
	}
	parts := c.output
	if parts == nil {
		parts = []genAIPart{}
	}
	input := c.input
	if input == nil {
		input = []genAIMessage{}
	}
	ib, _ := json.Marshal(input)
	ob, _ := json.Marshal([]genAIMessage{{Role: "assistant", Parts: parts, FinishReason: finish}})
	c.input, c.output = nil, nil
	return string(ib), string(ob)
}

// redacter is a driver that redacts secrets from text as its sessions'
// transcripts are (package profile's transcribing driver).
type redacter interface {
	Redact(s string) string
}

// prompted is a driver that gives the prompt of each session it runs to
// its call timer's content first.
type prompted struct {
	agent.Driver
	content *callContent
}

func (p prompted) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	p.content.prompt(s.Prompt)
	return p.Driver.Run(ctx, s)
}

func (c *callTimer) message(m agent.Message) {
	now := c.clock()
	if c.content != nil {
		c.content.message(m)
	}
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
		ev := events.ModelCall{
			Role: string(c.s.Role), Phase: c.s.Phase, Lane: c.s.Lane, Model: c.s.Model,
			InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
			Start: c.mark, Duration: max(end.Sub(c.mark), 0),
		}
		if c.content != nil {
			ev.InputMessages, ev.OutputMessages = c.content.take()
		}
		graph.Emit(c.ctx, events.EventModelCall, ev)
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
// its messages, then passing them on to its own OnMessage. With
// Config.TraceContent and a driver that redacts (redacter), the model
// calls' events carry their content, the prompts through the driver
// returned (prompted); otherwise d is returned as it is.
func (w *workflow) withCalls(ctx context.Context, d agent.Driver, s agent.Session) (agent.Driver, agent.Session) {
	start := w.cfg.Clock()
	c := &callTimer{ctx: ctx, s: s, clock: w.cfg.Clock, mark: start, last: start}
	if r, ok := d.(redacter); ok && w.cfg.TraceContent {
		c.content = &callContent{redact: r.Redact}
		d = prompted{Driver: d, content: c.content}
	}
	next := s.OnMessage
	s.OnMessage = func(m agent.Message) {
		c.message(m)
		if next != nil {
			next(m)
		}
	}
	return d, s
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
