package codex

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/state"
)

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

// Parse reads codex's JSON lines: the thread id from thread.started,
// the last agent_message as the final text, usage summed over
// turn.completed, failure from turn.failed (or an error event when no turn
// completed). Commands and file changes become tool messages.
func (Vendor) Parse(stdout []byte) clikit.Result {
	var r clikit.Result
	var lastError string
	completed := false
	lines := newLines()
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		line = bytes.TrimSpace(line)
		ev, ok := decodeCodex(line)
		if !ok {
			continue
		}
		switch ev.Type {
		case "thread.started":
			r.SessionID = ev.ThreadID
		case "turn.completed":
			completed, r.Parsed = true, true
			if ev.Usage != nil {
				r.Usage = r.Usage.Add(state.Usage{
					InputTokens:  ev.Usage.InputTokens - ev.Usage.CachedInputTokens,
					OutputTokens: ev.Usage.OutputTokens,
					CachedTokens: ev.Usage.CachedInputTokens,
				})
			}
		case "turn.failed":
			r.Parsed, r.IsError = true, true
			if ev.Error != nil {
				r.ErrText = ev.Error.Message
			}
		case "error":
			lastError = ev.Message
		case "item.completed":
			if ev.Item != nil && ev.Item.Type == "agent_message" {
				r.Text = ev.Item.Text
			}
			r.Messages = append(r.Messages, lines.Messages(line)...)
		}
	}
	if !completed && !r.IsError && lastError != "" {
		r.Parsed, r.IsError, r.ErrText = true, true, lastError
	}
	if r.IsError && r.ErrText == "" {
		r.ErrText = "the agent's turn failed"
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

// lines is Codex's clikit.LineParser: the messages of completed items.
type lines struct{ running clikit.Tools }

func newLines() *lines { return &lines{} }

// Lines returns a parser of codex's JSON lines.
func (Vendor) Lines() clikit.LineParser { return newLines() }

// Messages returns the messages of one line.
func (p *lines) Messages(line []byte) []agent.Message {
	ev, ok := decodeCodex(bytes.TrimSpace(line))
	if !ok || ev.Item == nil {
		return nil
	}
	if ev.Item.Type == "command_execution" {
		switch ev.Type {
		case "item.started":
			p.running.Start("command " + ev.Item.Command)
		case "item.completed":
			p.running.Done()
		}
	}
	if ev.Type == "item.completed" {
		return itemMessages(ev)
	}
	return nil
}

// Busy returns the command Codex is running, or "".
func (p *lines) Busy() string { return p.running.Busy() }

// itemMessages returns the messages of a completed Codex item.
func itemMessages(ev codexEvent) []agent.Message {
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
