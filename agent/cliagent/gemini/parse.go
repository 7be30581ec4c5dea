package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/state"
)

// event is one line of "gemini --output-format stream-json", read by key
// (Gemini CLI 0.61): init, message (user or assistant, the assistant's in
// deltas), tool_use, tool_result and the closing result.
type event struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		Cached       int `json:"cached"`
	} `json:"stats"`
}

func decode(b []byte) (event, bool) {
	var ev event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return ev, false
	}
	return ev, true
}

// Parse reads the Gemini CLI's JSON lines: the session id from init, the
// assistant's text after its last tool call as the final text, usage and
// failure from the result (its API error code as Result.APIStatus). Tool
// calls and their results become tool messages.
func (Vendor) Parse(stdout []byte) clikit.Result {
	var r clikit.Result
	lines := newLines()
	var final strings.Builder
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		ev, ok := decode(bytes.TrimSpace(line))
		if !ok {
			continue
		}
		r.Messages = append(r.Messages, lines.Messages(line)...)
		switch ev.Type {
		case "init":
			r.SessionID = ev.SessionID
		case "message":
			if ev.Role == "assistant" {
				final.WriteString(ev.Content)
			}
		case "tool_use":
			final.Reset()
		case "result":
			r.Parsed = true
			if ev.Stats != nil {
				r.Usage = state.Usage{InputTokens: ev.Stats.InputTokens - ev.Stats.Cached, OutputTokens: ev.Stats.OutputTokens, CachedTokens: ev.Stats.Cached}
			}
			if ev.Status != "success" {
				r.IsError = true
				r.ErrText = "the agent reported an error (" + ev.Status + ")"
				if ev.Error != nil && ev.Error.Message != "" {
					r.ErrText = ev.Error.Message
				}
				r.APIStatus = errorCode(r.ErrText)
			}
		}
	}
	r.Text = final.String()
	return r
}

// lines is the Gemini CLI's clikit.LineParser. It joins the assistant's
// deltas into one text message, emitted when a tool call or the result
// ends it.
type lines struct {
	tools   map[string]string // tool ids and their names
	text    strings.Builder
	running clikit.Tools
}

func newLines() *lines { return &lines{tools: map[string]string{}} }

// Lines returns a parser of the Gemini CLI's JSON lines.
func (Vendor) Lines() clikit.LineParser { return newLines() }

// Messages returns the messages one line completes.
func (p *lines) Messages(line []byte) []agent.Message {
	ev, ok := decode(bytes.TrimSpace(line))
	if !ok {
		return nil
	}
	switch ev.Type {
	case "message":
		if ev.Role == "assistant" {
			p.text.WriteString(ev.Content)
		}
		return nil
	case "tool_use":
		p.tools[ev.ToolID] = ev.ToolName
		p.running.Start(ev.ToolName)
		return append(p.flush(), agent.Message{Kind: agent.ToolCall, Tool: ev.ToolName, Input: string(ev.Parameters)})
	case "tool_result":
		p.running.Done()
		text := ev.Output
		if ev.Error != nil && ev.Error.Message != "" {
			text = ev.Error.Message
		}
		return []agent.Message{{Kind: agent.ToolResult, Tool: p.tools[ev.ToolID], Text: text, IsError: ev.Status != "success"}}
	case "result":
		return p.flush()
	}
	return nil
}

// flush returns the assistant's text gathered so far as one message.
func (p *lines) flush() []agent.Message {
	if p.text.Len() == 0 {
		return nil
	}
	m := agent.Message{Kind: agent.Text, Text: p.text.String()}
	p.text.Reset()
	return []agent.Message{m}
}

// Busy returns the tool the Gemini CLI is running, or "".
func (p *lines) Busy() string { return p.running.Busy() }
