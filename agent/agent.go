package agent

import (
	"context"
	"fmt"

	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/story"
)

// Role names the part an agent plays in the workflow.
type Role string

// The roles of the workflow's agents.
const (
	RoleArchitect Role = "architect" // writes the plan from the goal
	RoleDeveloper Role = "developer" // carries out one phase (or task) of the plan
	RoleReviewer  Role = "reviewer"  // approves or rejects a phase's changes
	RoleEvaluator Role = "evaluator" // sorts review items into IMPLEMENT, REJECT and DEFER
	// RoleSummarizer, optional, compresses the Task Story at a phase
	// boundary; its text replaces the deterministic one only when
	// story.CheckSummary accepts it.
	RoleSummarizer Role = "summarizer"
	// RoleDoctor diagnoses a failed attempt and answers strict JSON
	// (recovery.ParseDoctorAnswer); it changes nothing.
	RoleDoctor Role = "doctor"
	// RoleReplanner revises a stuck phase's approach within its goal
	// anchor and answers strict JSON; it changes nothing.
	RoleReplanner Role = "replanner"
)

// Valid reports whether r is one of the five roles.
func (r Role) Valid() bool {
	switch r {
	case RoleArchitect, RoleDeveloper, RoleReviewer, RoleEvaluator, RoleSummarizer, RoleDoctor, RoleReplanner:
		return true
	}
	return false
}

// Tool names a capability an agent session may be given. Session.Tools lists
// the names a session may use; a driver refuses the others.
const (
	ToolRead   = "read"   // read a file
	ToolWrite  = "write"  // create or overwrite a file, make a directory
	ToolEdit   = "edit"   // replace one exact occurrence of a text in a file
	ToolDelete = "delete" // delete a file or directory
	ToolList   = "list"   // list or glob files
	ToolGrep   = "grep"   // search file contents
	ToolRun    = "run"    // run a shell command in the repository
)

// DefaultTools returns the tools a role gets unless the profile says
// otherwise: the developer may change files and run commands, the other roles
// may only look (and run commands, so a reviewer can run the tests).
func DefaultTools(r Role) []string {
	if r == RoleDeveloper {
		return []string{ToolRead, ToolWrite, ToolEdit, ToolDelete, ToolList, ToolGrep, ToolRun}
	}
	return []string{ToolRead, ToolList, ToolGrep, ToolRun}
}

// Session is everything a driver needs to run one agent session.
type Session struct {
	Role      Role
	RunID     string
	Phase     int // 1-based phase (or task) number; 0 for the architect
	Attempt   int // 1-based attempt of this phase (a fresh session each attempt in phased mode)
	Iteration int // 1-based review iteration within the phase or task
	Revision  int // architect: 0 for the first plan, 1.. for revisions after validator problems or human feedback; reviewer: 0 for a review, 1.. for recovery's second opinion on the phase's Revision-th replan
	// Tasks are the ids of the plan's tasks a developer session works on:
	// its lane's (the phase's, for a phase of one lane); nil for other
	// roles.
	Tasks []string
	// Lane is the 1-based lane of a developer session in a phase of
	// several lanes, which run at once; 0 in a phase of one.
	Lane      int
	Prompt    string
	Dir       string // repository root; all tool and file work is confined to it
	SessionID string // a session to continue; "" starts a fresh one
	Tools     []string
	// Model, when set, is the model this session runs with instead of the
	// driver's model for the role: the Doctor's strong model, or the
	// escalation model of a phase the stuck handler escalated.
	Model string
	// Tier is the Doctor's tier ("cheap" or "strong"); "" for other roles.
	Tier string
	// StoryDir, when set, is the Task Story's directory (slash separated,
	// relative to Dir): the llm driver's expand_context tool reads an
	// earlier phase's decision records from it.
	StoryDir string
	// OnMessage, when set, receives the session's messages as they happen:
	// text, tool calls, tool results and usage updates. It is called from the
	// goroutine that called Run, never concurrently.
	OnMessage func(Message)
}

// Emit passes m to s.OnMessage when there is one.
func (s Session) Emit(m Message) {
	if s.OnMessage != nil {
		s.OnMessage(m)
	}
}

// Allows reports whether the session may use tool: every tool is allowed when
// s.Tools is empty. Drivers refuse the tools it does not allow.
func (s Session) Allows(tool string) bool {
	if len(s.Tools) == 0 {
		return true
	}
	for _, t := range s.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// MessageKind says what a Message carries.
type MessageKind int

// The kinds of message a session streams.
const (
	Text        MessageKind = iota // text from the agent
	ToolCall                       // the agent calls a tool: Tool and Input are set
	ToolResult                     // a tool's result: Tool, Text and IsError are set
	UsageUpdate                    // tokens and cost of the model call just made: Usage is set
)

// String returns the kind's name: text, tool_call, tool_result or usage.
func (k MessageKind) String() string {
	switch k {
	case Text:
		return "text"
	case ToolCall:
		return "tool_call"
	case ToolResult:
		return "tool_result"
	case UsageUpdate:
		return "usage"
	}
	return fmt.Sprintf("MessageKind(%d)", int(k))
}

// Message is one item of a session's stream.
type Message struct {
	Kind    MessageKind
	Text    string      // the agent's text, or a tool result
	Tool    string      // the tool called (ToolCall, ToolResult)
	Input   string      // the tool call's input, as text (ToolCall)
	IsError bool        // the tool failed (ToolResult)
	Usage   state.Usage // the usage of one model call, a delta (UsageUpdate)
}

// Status is the outcome of a session.
type Status string

// The outcomes of a session.
const (
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
)

// Report is what a session hands back.
type Report struct {
	Status       Status
	Summary      string
	Output       string      // the final text: plan markdown (architect), review JSON (reviewer), evaluation JSON (evaluator)
	FilesChanged []string    // slash-separated paths relative to the repository root, in the order first touched
	Error        string      // what went wrong when Status is failed, in full (test output and all)
	SessionID    string      // to continue this session later
	Usage        state.Usage // the session's total
	// Story is the session's structured report for the Task Story:
	// decisions, commands (TODO / NOT TODO), methods, dependencies and
	// recommendations. Empty when the agent gave none.
	Story story.Facts
	// Expansions counts the session's expand_context calls (llm driver).
	Expansions int
}

// Driver runs agent sessions.
//
// Run returns an error only when the session could not run at all: a broken
// configuration, an unreachable model, a cancelled ctx (the error then wraps
// ctx.Err()). An agent that ran and did not succeed — its tests fail, an
// edit does not apply, it gives up — is a Report with Status StatusFailed and
// the reason in Error, and a nil error; the workflow treats it as a rejected
// attempt.
//
// A Driver must be safe for concurrent use by several sessions.
type Driver interface {
	Run(ctx context.Context, s Session) (Report, error)
}
