package cliagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// cliResult is what a CLI agent's stdout says about its session.
type cliResult struct {
	parsed    bool   // the output held the format's final result
	text      string // the final text
	sessionID string
	usage     state.Usage
	costKnown bool // the agent reported its cost
	isError   bool // the agent reported failure
	errText   string
	messages  []agent.Message // what the session did, in order
	// apiStatus and apiError are Claude Code's api_error_status (the
	// provider's HTTP status) and api_error ("connection_failed", …) of a
	// session that ended on an API error; zero and "" otherwise.
	apiStatus int
	apiError  string
	claude    bool // the result is Claude Code's, whose errText may be the agent's own words
}

// parseCLIOutput reads stdout in format f. It never fails: output that is
// not in the format gives a result with parsed false.
func parseCLIOutput(f OutputFormat, stdout []byte) cliResult {
	switch f {
	case OutputClaudeJSON:
		return parseClaude(stdout)
	case OutputCodexJSONL:
		return parseCodex(stdout)
	}
	text := strings.TrimSpace(string(stdout))
	return cliResult{parsed: true, text: text}
}

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

func parseClaude(stdout []byte) cliResult {
	var r cliResult
	if ev, ok := decodeClaude(bytes.TrimSpace(stdout)); ok && ev.Type == "result" {
		r.takeClaudeResult(ev)
		return r
	}
	lines := newLineParser(OutputClaudeJSON)
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		ev, ok := decodeClaude(bytes.TrimSpace(line))
		if !ok {
			continue
		}
		switch ev.Type {
		case "system":
			if ev.SessionID != "" {
				r.sessionID = ev.SessionID
			}
		case "assistant", "user":
			r.messages = append(r.messages, lines.messages(line)...)
		case "result":
			r.takeClaudeResult(ev)
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

func (r *cliResult) takeClaudeResult(ev claudeEvent) {
	r.parsed, r.claude = true, true
	if ev.APIStatus != nil {
		r.apiStatus = *ev.APIStatus
	}
	r.apiError = ev.APIError
	r.text = ev.Result
	if ev.SessionID != "" {
		r.sessionID = ev.SessionID
	}
	if ev.Usage != nil {
		r.usage = ev.Usage.usage()
	}
	if ev.TotalCostUSD != nil {
		r.usage.CostUSD, r.costKnown = *ev.TotalCostUSD, true
	}
	if ev.IsError || strings.HasPrefix(ev.Subtype, "error") {
		r.isError = true
		parts := []string{}
		if ev.Result != "" {
			parts = append(parts, ev.Result)
		}
		parts = append(parts, ev.Errors...)
		if len(parts) == 0 {
			parts = append(parts, "the agent reported an error ("+ev.Subtype+")")
		}
		r.errText = strings.Join(parts, "\n")
	}
}

// claudeMessages turns a stream-json message's content blocks into
// Messages; tools maps tool_use ids to tool names, so that a result names
// its tool.
func claudeMessages(content json.RawMessage, tools map[string]string) []agent.Message {
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

// codexEvent is one line of "codex exec --json", read by key.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Usage    *struct {
		InputTokens       int `json:"input_tokens"`
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item *struct {
		Type             string `json:"type"`
		Text             string `json:"text"`
		Command          string `json:"command"`
		AggregatedOutput string `json:"aggregated_output"`
		ExitCode         *int   `json:"exit_code"`
		Status           string `json:"status"`
		Changes          []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

// parseCodex reads codex's JSON lines: the thread id from thread.started,
// the last agent_message as the final text, usage summed over
// turn.completed, failure from turn.failed (or an error event when no turn
// completed). Commands and file changes become tool messages.
func parseCodex(stdout []byte) cliResult {
	var r cliResult
	var lastError string
	completed := false
	lines := newLineParser(OutputCodexJSONL)
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		line = bytes.TrimSpace(line)
		ev, ok := decodeCodex(line)
		if !ok {
			continue
		}
		switch ev.Type {
		case "thread.started":
			r.sessionID = ev.ThreadID
		case "turn.completed":
			completed, r.parsed = true, true
			if ev.Usage != nil {
				r.usage = r.usage.Add(state.Usage{
					InputTokens:  ev.Usage.InputTokens - ev.Usage.CachedInputTokens,
					OutputTokens: ev.Usage.OutputTokens,
					CachedTokens: ev.Usage.CachedInputTokens,
				})
			}
		case "turn.failed":
			r.parsed, r.isError = true, true
			if ev.Error != nil {
				r.errText = ev.Error.Message
			}
		case "error":
			lastError = ev.Message
		case "item.completed":
			if ev.Item != nil && ev.Item.Type == "agent_message" {
				r.text = ev.Item.Text
			}
			r.messages = append(r.messages, lines.messages(line)...)
		}
	}
	if !completed && !r.isError && lastError != "" {
		r.parsed, r.isError, r.errText = true, true, lastError
	}
	if r.isError && r.errText == "" {
		r.errText = "the agent's turn failed"
	}
	return r
}

func decodeCodex(b []byte) (codexEvent, bool) {
	var ev codexEvent
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil || ev.Type == "" {
		return ev, false
	}
	return ev, true
}

// lineParser returns the messages each line of streamed output carries:
// Claude Code's stream-json assistant and user events, Codex's completed
// items. Fed the same lines in the same order, it gives the same messages
// as parseCLIOutput, so a driver can emit them as lines come and the rest
// at the end.
type lineParser struct {
	format OutputFormat
	tools  map[string]string // Claude's tool_use ids and their tools' names
	// running counts the tool calls started and not yet answered, and
	// last names the latest: whether the agent was running one of its
	// tools or waiting for its model.
	running int
	last    string
}

// busy returns the tool the agent is running, "" when none: it is waiting
// for its model, or its output does not say.
func (p *lineParser) busy() string {
	if p.running > 0 {
		return p.last
	}
	return ""
}

func newLineParser(f OutputFormat) *lineParser {
	return &lineParser{format: f, tools: map[string]string{}}
}

func (p *lineParser) messages(line []byte) []agent.Message {
	line = bytes.TrimSpace(line)
	switch p.format {
	case OutputClaudeJSON:
		if ev, ok := decodeClaude(line); ok && (ev.Type == "assistant" || ev.Type == "user") && ev.Message != nil {
			msgs := claudeMessages(ev.Message.Content, p.tools)
			for _, m := range msgs {
				switch m.Kind {
				case agent.ToolCall:
					p.running++
					p.last = m.Tool
				case agent.ToolResult:
					p.running = max(p.running-1, 0)
				}
			}
			return msgs
		}
	case OutputCodexJSONL:
		ev, ok := decodeCodex(line)
		if !ok || ev.Item == nil {
			return nil
		}
		if ev.Item.Type == "command_execution" {
			switch ev.Type {
			case "item.started":
				p.running++
				p.last = "command " + ev.Item.Command
			case "item.completed":
				p.running = max(p.running-1, 0)
			}
		}
		if ev.Type == "item.completed" {
			return codexItemMessages(ev)
		}
	}
	return nil
}

// codexItemMessages returns the messages of a completed Codex item.
func codexItemMessages(ev codexEvent) []agent.Message {
	it := ev.Item
	switch it.Type {
	case "agent_message":
		return []agent.Message{{Kind: agent.Text, Text: it.Text}}
	case "command_execution":
		failed := it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0)
		return []agent.Message{
			{Kind: agent.ToolCall, Tool: agent.ToolRun, Input: it.Command},
			{Kind: agent.ToolResult, Tool: agent.ToolRun, Text: it.AggregatedOutput, IsError: failed},
		}
	case "file_change":
		var out []agent.Message
		for _, c := range it.Changes {
			out = append(out, agent.Message{Kind: agent.ToolCall, Tool: agent.ToolEdit, Input: fmt.Sprintf("%s %s", c.Kind, c.Path)})
		}
		return out
	}
	return nil
}
