package claude

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/state"
)

// claudeEvent is a Claude Code output object, read by key: the result
// object of --output-format json, or one line of stream-json.
type claudeEvent struct {
	Type         string       `json:"type"`
	Subtype      string       `json:"subtype"`
	IsError      bool         `json:"is_error"`
	Result       string       `json:"result"`
	SessionID    string       `json:"session_id"`
	TotalCostUSD *float64     `json:"total_cost_usd"`
	Usage        *claudeUsage `json:"usage"`
	Errors       []string     `json:"errors"`
	APIStatus    *int         `json:"api_error_status"`
	APIError     string       `json:"api_error"`
	Message      *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// usage counts cache writes as input and cache reads as cached tokens.
func (u claudeUsage) usage() state.Usage {
	return state.Usage{
		InputTokens:  u.InputTokens + u.CacheCreationInputTokens,
		OutputTokens: u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens,
	}
}

type claudeBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// Parse reads Claude Code's output: the result object of
// --output-format json, or the lines of stream-json (the session id from
// the system line, messages from assistant and user lines, the result
// from the last).
func (Vendor) Parse(stdout []byte) clikit.Result {
	var r clikit.Result
	if ev, ok := decodeClaude(bytes.TrimSpace(stdout)); ok && ev.Type == "result" {
		takeResult(&r, ev)
		return r
	}
	lines := newLines()
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		ev, ok := decodeClaude(bytes.TrimSpace(line))
		if !ok {
			continue
		}
		switch ev.Type {
		case "system":
			if ev.SessionID != "" {
				r.SessionID = ev.SessionID
			}
		case "assistant", "user":
			r.Messages = append(r.Messages, lines.Messages(line)...)
		case "result":
			takeResult(&r, ev)
		}
	}
	return r
}

func decodeClaude(b []byte) (claudeEvent, bool) {
	var ev claudeEvent
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil {
		return ev, false
	}
	return ev, true
}

// takeResult puts the result object ev into r.
func takeResult(r *clikit.Result, ev claudeEvent) {
	r.Parsed = true
	if ev.APIStatus != nil {
		r.APIStatus = *ev.APIStatus
	}
	r.APIError = ev.APIError
	r.Text = ev.Result
	if ev.SessionID != "" {
		r.SessionID = ev.SessionID
	}
	if ev.Usage != nil {
		r.Usage = ev.Usage.usage()
	}
	if ev.TotalCostUSD != nil {
		r.Usage.CostUSD, r.CostKnown = *ev.TotalCostUSD, true
	}
	if ev.IsError || strings.HasPrefix(ev.Subtype, "error") {
		r.IsError = true
		parts := []string{}
		if ev.Result != "" {
			parts = append(parts, ev.Result)
		}
		parts = append(parts, ev.Errors...)
		if len(parts) == 0 {
			parts = append(parts, "the agent reported an error ("+ev.Subtype+")")
		}
		r.ErrText = strings.Join(parts, "\n")
	}
}

// messages turns a stream-json message's content blocks into
// Messages; tools maps tool_use ids to tool names, so that a result names
// its tool.
func messages(content json.RawMessage, tools map[string]string) []agent.Message {
	var blocks []claudeBlock
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	var out []agent.Message
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, agent.Message{Kind: agent.Text, Text: b.Text})
		case "tool_use":
			tools[b.ID] = b.Name
			out = append(out, agent.Message{Kind: agent.ToolCall, Tool: b.Name, Input: string(b.Input)})
		case "tool_result":
			out = append(out, agent.Message{Kind: agent.ToolResult, Tool: tools[b.ToolUseID], Text: blockText(b.Content), IsError: b.IsError})
		}
	}
	return out
}

// blockText returns a tool result's content, given as a string or as text
// blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// lines is Claude Code's clikit.LineParser: the messages of stream-json's
// assistant and user events.
type lines struct {
	tools   map[string]string // tool_use ids and their tools' names
	running clikit.Tools
}

func newLines() *lines { return &lines{tools: map[string]string{}} }

// Lines returns a parser of stream-json lines.
func (Vendor) Lines() clikit.LineParser { return newLines() }

// Messages returns the messages of one stream-json line.
func (p *lines) Messages(line []byte) []agent.Message {
	ev, ok := decodeClaude(bytes.TrimSpace(line))
	if !ok || (ev.Type != "assistant" && ev.Type != "user") || ev.Message == nil {
		return nil
	}
	msgs := messages(ev.Message.Content, p.tools)
	for _, m := range msgs {
		switch m.Kind {
		case agent.ToolCall:
			p.running.Start(m.Tool)
		case agent.ToolResult:
			p.running.Done()
		}
	}
	return msgs
}

// Busy returns the tool Claude Code is running, or "".
func (p *lines) Busy() string { return p.running.Busy() }
