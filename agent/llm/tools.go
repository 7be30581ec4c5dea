package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/gaffer-dev/gaffer/agent"
)

// Bounds of the llm driver's tools' output.
const (
	maxReadBytes   = 256 << 10 // read_file
	maxListEntries = 2000      // list_files
	maxGrepMatches = 300       // grep
	maxGrepLine    = 300       // grep: bytes of one matching line
	maxGrepFile    = 4 << 20   // grep: larger files are skipped
)

// llmTool is a tool as the model sees it, and the Session tool it needs.
type llmTool struct {
	name, needs, desc string
	params            map[string]any // JSON schema properties
	required          []string
}

// llmTools lists the tools of the llm driver.
func llmTools() []llmTool {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	num := func(d string) map[string]any { return map[string]any{"type": "integer", "description": d} }
	path := str("path relative to the repository root")
	return []llmTool{
		{name: "read_file", needs: agent.ToolRead, desc: "Read a text file, or a range of its lines (1-based, inclusive).",
			params: map[string]any{"path": path, "start_line": num("first line to read"), "end_line": num("last line to read")}, required: []string{"path"}},
		{name: "write_file", needs: agent.ToolWrite, desc: "Create or overwrite a file with the given content, making parent directories.",
			params: map[string]any{"path": path, "content": str("the whole new content")}, required: []string{"path", "content"}},
		{name: "edit_file", needs: agent.ToolEdit, desc: "Replace the one exact occurrence of old_text in a file with new_text. Fails if old_text is absent or occurs more than once; then include more surrounding text.",
			params: map[string]any{"path": path, "old_text": str("exact text to replace"), "new_text": str("replacement")}, required: []string{"path", "old_text", "new_text"}},
		{name: "delete_file", needs: agent.ToolDelete, desc: "Delete a file or a directory with everything in it.",
			params: map[string]any{"path": path}, required: []string{"path"}},
		{name: "list_files", needs: agent.ToolList, desc: `List files matching a glob relative to the repository root ("**" matches any directories, "*" within one). Default "**".`,
			params: map[string]any{"pattern": str(`glob such as "**/*.go" or "cmd/*"`)}},
		{name: "grep", needs: agent.ToolGrep, desc: "Search file contents with a regular expression (Go RE2 syntax); prints path:line: text.",
			params: map[string]any{"pattern": str("regular expression"), "glob": str(`only files matching this glob, e.g. "**/*.go"`)}, required: []string{"pattern"}},
		{name: "run_command", needs: agent.ToolRun, desc: "Run a shell command (sh -c) in the repository root with a timeout; prints the exit code and output (long output is cut in the middle).",
			params: map[string]any{"command": str("the shell command")}, required: []string{"command"}},
		{name: "git_status", needs: agent.ToolRead, desc: "Show git status --short of the repository.", params: map[string]any{}},
		{name: toolExpandContext, needs: agent.ToolRead, desc: fmt.Sprintf("Read the full decision records (Task Story) of an earlier phase, when the story in your prompt lacks a detail you need. At most %d calls per phase in a session, reading a phase's record files with read_file included.", maxExpansions),
			params: map[string]any{"phase": num("the phase's number, from 1")}, required: []string{"phase"}},
		{name: "git_diff", needs: agent.ToolRead, desc: "Show the uncommitted changes (git diff HEAD), optionally for one path.",
			params: map[string]any{"path": path}},
	}
}

// tools returns the langchaingo tools the session may use.
func (l *loop) tools() []llms.Tool {
	var out []llms.Tool
	for _, t := range llmTools() {
		if !l.s.Allows(t.needs) || (t.name == toolExpandContext && l.s.StoryDir == "") {
			continue
		}
		if t.name == toolExpandContext {
			if c := l.expansionCosts(); c != "" {
				t.desc += " " + c // the cost before the call (seed 004)
			}
		}
		schema := map[string]any{"type": "object", "properties": t.params}
		if len(t.required) > 0 {
			schema["required"] = t.required
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: t.name, Description: t.desc, Parameters: schema,
		}})
	}
	return out
}

// callTool runs one tool call. A failure the model can act on (a bad call,
// a refused path, a failing command) is the result text with isErr set;
// the error is for a ctx that ended.
func (l *loop) callTool(ctx context.Context, c llms.ToolCall) (result string, isErr bool, err error) {
	name := c.FunctionCall.Name
	i := slices.IndexFunc(llmTools(), func(t llmTool) bool { return t.name == name })
	if i < 0 {
		return fmt.Sprintf("unknown tool %q; the tools are: %s", name, strings.Join(l.toolNames(), ", ")), true, nil
	}
	t := llmTools()[i]
	if !l.s.Allows(t.needs) || (t.name == toolExpandContext && l.s.StoryDir == "") {
		return fmt.Sprintf("%s: %v: this session may use %s", name, agent.ErrToolNotAllowed, strings.Join(l.toolNames(), ", ")), true, nil
	}
	args, err := parseArgs(c.FunctionCall.Arguments, t)
	if err != nil {
		return fmt.Sprintf("%s: %v", name, err), true, nil
	}
	out, toolErr := l.do(ctx, name, args)
	if ctx.Err() != nil {
		return "", true, ctx.Err()
	}
	if errors.Is(toolErr, agent.ErrProcessGroup) {
		return "", true, toolErr // gaffer failed, not the model: the session cannot go on
	}
	if toolErr != nil {
		return toolErr.Error(), true, nil
	}
	return out, false, nil
}

// toolArgs are a call's arguments, checked against the tool's schema.
type toolArgs map[string]any

func (a toolArgs) str(k string) string { s, _ := a[k].(string); return s }
func (a toolArgs) num(k string) int    { n, _ := a[k].(float64); return int(n) }

// parseArgs decodes a call's JSON arguments and checks the required ones
// are there and of the right type.
func parseArgs(raw string, t llmTool) (toolArgs, error) {
	args := toolArgs{}
	if strings.TrimSpace(raw) != "" {
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			return nil, fmt.Errorf("the arguments are not a valid JSON object: %v", err)
		}
	}
	for _, k := range t.required {
		if _, ok := args[k]; !ok {
			return nil, fmt.Errorf("missing required argument %q", k)
		}
	}
	for k, v := range args {
		p, ok := t.params[k].(map[string]any)
		if !ok || v == nil {
			continue // unknown or null arguments are ignored
		}
		switch p["type"] {
		case "string":
			if _, ok := v.(string); !ok {
				return nil, fmt.Errorf("argument %q must be a string", k)
			}
		case "integer":
			if _, ok := v.(float64); !ok {
				return nil, fmt.Errorf("argument %q must be an integer", k)
			}
		}
	}
	return args, nil
}

// toolNames lists the tools the session may use.
func (l *loop) toolNames() []string {
	var names []string
	for _, t := range llmTools() {
		if l.s.Allows(t.needs) && (t.name != toolExpandContext || l.s.StoryDir != "") {
			names = append(names, t.name)
		}
	}
	return names
}

// do carries out a checked tool call.
func (l *loop) do(ctx context.Context, name string, a toolArgs) (string, error) {
	switch name {
	case "read_file":
		if p, ok := l.storyRecordPhase(a.str("path")); ok {
			if err := l.spendExpansion("read_file", p); err != nil {
				return "", err
			}
		}
		return l.readFile(a.str("path"), a.num("start_line"), a.num("end_line"))
	case "write_file":
		if err := l.tb.Write(a.str("path"), a.str("content")); err != nil {
			return "", err
		}
		l.changed.Add(a.str("path"))
		return fmt.Sprintf("wrote %d bytes to %s", len(a.str("content")), a.str("path")), nil
	case "edit_file":
		if err := l.tb.Edit(a.str("path"), a.str("old_text"), a.str("new_text")); err != nil {
			return "", err
		}
		l.changed.Add(a.str("path"))
		return "edited " + a.str("path"), nil
	case "delete_file":
		if err := l.tb.Delete(a.str("path")); err != nil {
			return "", err
		}
		l.changed.Add(a.str("path"))
		return "deleted " + a.str("path"), nil
	case "list_files":
		return l.listFiles(a.str("pattern"))
	case "grep":
		return l.grep(a.str("pattern"), a.str("glob"))
	case "run_command":
		return l.command(ctx, a.str("command"))
	case toolExpandContext:
		return l.expandContext(a.num("phase"))
	case "git_status":
		return l.command(ctx, "git status --short")
	case "git_diff":
		cmd := "git diff HEAD"
		if p := a.str("path"); p != "" {
			if _, err := l.tb.Resolve(p); err != nil {
				return "", err
			}
			cmd += " -- " + shellQuote(p)
		}
		return l.command(ctx, cmd)
	}
	return "", fmt.Errorf("tool %q is not implemented", name)
}

// readFile reads a file, or lines from..to of it.
func (l *loop) readFile(path string, from, to int) (string, error) {
	text, err := l.tb.Read(path)
	if err != nil {
		return "", err
	}
	if from > 0 || to > 0 {
		lines := strings.SplitAfter(text, "\n")
		from = max(from, 1)
		if to <= 0 || to > len(lines) {
			to = len(lines)
		}
		if from > to {
			return "", &agent.ToolError{Op: "read", Path: path, Err: fmt.Errorf("line range %d-%d is outside the file's %d lines", from, to, len(lines))}
		}
		text = strings.Join(lines[from-1:to], "")
	}
	if len(text) > maxReadBytes {
		text = strings.ToValidUTF8(text[:maxReadBytes], "") +
			fmt.Sprintf("\n[… cut at %d bytes of %d; read a line range for the rest]", maxReadBytes, len(text))
	}
	return text, nil
}

// command runs a shell command and describes its outcome. A command that
// fails is an error so the model sees it marked as one.
func (l *loop) command(ctx context.Context, command string) (string, error) {
	res, err := l.tb.Run(ctx, command, nil)
	if err != nil {
		return "", err
	}
	status := fmt.Sprintf("exit code %d", res.ExitCode)
	if res.TimedOut {
		status = "timed out"
	}
	out := fmt.Sprintf("%s\n%s", status, res.Output)
	if res.Failed() {
		return "", errors.New(out)
	}
	return out, nil
}

// walk calls fn with the slash-separated path of every regular file under
// the root that matches glob ("" matches all), skipping .git.
func (l *loop) walk(glob string, fn func(rel, full string) bool) error {
	re, err := globRegexp(glob)
	if err != nil {
		return err
	}
	root := l.tb.Root()
	return filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are left out
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !re.MatchString(rel) {
			return nil
		}
		if !fn(rel, p) {
			return fs.SkipAll
		}
		return nil
	})
}

// listFiles lists the files matching pattern.
func (l *loop) listFiles(pattern string) (string, error) {
	var b strings.Builder
	n := 0
	err := l.walk(pattern, func(rel, _ string) bool {
		n++
		if n > maxListEntries {
			return false
		}
		b.WriteString(rel + "\n")
		return true
	})
	if err != nil {
		return "", &agent.ToolError{Op: "list", Path: pattern, Err: err}
	}
	if n == 0 {
		return "no files match", nil
	}
	if n > maxListEntries {
		fmt.Fprintf(&b, "[… stopped after %d files; use a narrower pattern]\n", maxListEntries)
	}
	return b.String(), nil
}

// grep searches the files matching glob for a regular expression.
func (l *loop) grep(pattern, glob string) (string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", &agent.ToolError{Op: "grep", Path: pattern, Err: err}
	}
	var b strings.Builder
	n := 0
	err = l.walk(glob, func(rel, full string) bool {
		data, err := os.ReadFile(full)
		if err != nil || len(data) > maxGrepFile || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return true // unreadable, huge or binary
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, maxGrepFile)
		for line := 1; sc.Scan(); line++ {
			if !re.Match(sc.Bytes()) {
				continue
			}
			if n++; n > maxGrepMatches {
				return false
			}
			text := sc.Text()
			if len(text) > maxGrepLine {
				text = strings.ToValidUTF8(text[:maxGrepLine], "") + "…"
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", rel, line, text)
		}
		return true
	})
	if err != nil {
		return "", &agent.ToolError{Op: "grep", Path: glob, Err: err}
	}
	if n == 0 {
		return "no matches", nil
	}
	if n > maxGrepMatches {
		fmt.Fprintf(&b, "[… stopped after %d matches; narrow the pattern or the glob]\n", maxGrepMatches)
	}
	return b.String(), nil
}

// globRegexp compiles a slash-separated glob: "**/" matches any leading
// directories, "**" anything, "*" and "?" within one path element. ""
// matches everything.
func globRegexp(glob string) (*regexp.Regexp, error) {
	glob = strings.TrimPrefix(strings.TrimSpace(filepath.ToSlash(glob)), "./")
	if glob == "" {
		glob = "**"
	}
	if strings.HasPrefix(glob, "/") || glob == ".." || strings.HasPrefix(glob, "../") {
		return nil, fmt.Errorf("%w: give a pattern relative to the repository root", agent.ErrPathEscape)
	}
	var b strings.Builder
	b.WriteString("^")
	lit := 0 // start of the pending literal text
	for i := 0; i < len(glob); i++ {
		var re string
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			re = "(?:.*/)?"
		case strings.HasPrefix(glob[i:], "**"):
			re = ".*"
		case glob[i] == '*':
			re = "[^/]*"
		case glob[i] == '?':
			re = "[^/]"
		default:
			continue
		}
		b.WriteString(regexp.QuoteMeta(glob[lit:i]) + re)
		i += map[string]int{"(?:.*/)?": 2, ".*": 1}[re]
		lit = i + 1
	}
	b.WriteString(regexp.QuoteMeta(glob[lit:]) + "$")
	return regexp.Compile(b.String())
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
