package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
)

// maxElicitPlan is how much of a plan run_wait shows the user when it
// asks for its approval, in bytes.
const maxElicitPlan = 16 << 10

// approvalSchema is the form run_wait asks the user to fill in for a
// plan: approve it or not, and feedback (for a rejection, what the
// architect should change).
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve the plan",
			"description": "true runs the plan; false rejects it", "default": true},
		"feedback": map[string]any{"type": "string", "title": "Feedback",
			"description": "for a rejection, what the architect should change (without it the run ends, rejected); for an approval, notes kept with it"},
	},
	"required": []string{"approve"},
}

// canElicit reports whether the client of ss said it can ask its user
// for input (the elicitation capability).
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// approvalMessage is what the user is shown: the run, its goal and its
// plan, cut to maxElicitPlan at a line.
func approvalMessage(p *runview.Plan) string {
	c := capped{max: maxElicitPlan}
	_, _ = c.Write([]byte(p.Markdown))
	b := c.bounded()
	var m strings.Builder
	fmt.Fprintf(&m, "gaffer run %s asks you to approve its plan (revision %d)", p.RunID, p.Revision)
	if p.Goal != "" {
		fmt.Fprintf(&m, " for: %s", p.Goal)
	}
	fmt.Fprintf(&m, ".\n\n%s", b.Text)
	if b.Truncated {
		fmt.Fprintf(&m, "\n… (the first %d of %d bytes; the whole plan is the resource gaffer://runs/%s/plan)", b.Bytes, b.TotalBytes, p.RunID)
	}
	m.WriteString("\n\nApprove to run it; reject with feedback to have the architect revise it, or without to end the run.")
	return m.String()
}

// elicitID names run_wait's input request (the plan's approval) in a
// multi round-trip call (SEP-2322).
const elicitID = "plan_approval"

// askState is run_wait's request state while it asks the user: the run
// and the plan revision shown, and what the user answered earlier in the
// same wait. A client could forge it, but it can answer the run anyway
// (run_approve): a response is taken only for the run named and only
// while that run still awaits that revision's approval.
type askState struct {
	RunID    string     `json:"run_id"`
	Revision int        `json:"revision"`
	Answers  []Answered `json:"answers,omitempty"`
}

// askApproval is the input-required result asking the user of run_wait's
// client to approve the plan of the run rs (revision v.PlanRevision): the
// client asks them (elicitation) and calls run_wait again with the
// answer, which approveAsked takes.
func askApproval(v runview.Run, rs host.RunStatus, answers []Answered) *mcp.CallToolResult {
	p := runview.PlanOf(rs.Snapshot.State)
	if p == nil {
		return nil
	}
	st, _ := json.Marshal(askState{RunID: v.RunID, Revision: v.PlanRevision, Answers: answers})
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{elicitID: &mcp.ElicitParams{Mode: "form", Message: approvalMessage(p), RequestedSchema: approvalSchema}},
		RequestState:  string(st),
	}
}

// asked reads the user's answer a retried run_wait call carries: the
// answer and the state it was asked in, or nil.
func asked(req *mcp.CallToolRequest, runID string) (*mcp.ElicitResult, askState) {
	var st askState
	if req.Params == nil || req.Params.RequestState == "" || json.Unmarshal([]byte(req.Params.RequestState), &st) != nil || st.RunID != runID {
		return nil, askState{}
	}
	res, _ := req.Params.InputResponses[elicitID].(*mcp.ElicitResult)
	return res, st
}

// answerAsked answers the run as the user said when asked for the plan of
// revision st.Revision, which v (the run now) still awaits: accept with
// approve true approves, accept with approve false rejects (with the
// feedback given); decline and cancel answer nothing, since a rejection
// without feedback ends the run and a dismissed form must not. It returns
// what was answered, or nil when nothing was.
func (s *Server) answerAsked(ctx context.Context, v runview.Run, res *mcp.ElicitResult, st askState) (*Answered, error) {
	if res == nil || v.Asks != runview.AsksApproval || v.PlanRevision != st.Revision {
		return nil, nil // no answer, or to a plan the run no longer asks about
	}
	verdict := host.Reject
	feedback := ""
	switch res.Action {
	case "accept":
		if ok, isBool := res.Content["approve"].(bool); ok || !isBool {
			verdict = host.Approve // a form without the field takes its default
		}
		feedback, _ = res.Content["feedback"].(string)
	default: // decline or cancel: the user did not answer the plan
		return nil, nil
	}
	out, err := s.cfg.Backend.Answer(ctx, host.AnswerRequest{RunID: v.RunID, Verdict: verdict, Feedback: strings.TrimSpace(feedback)})
	if err != nil {
		return nil, fmt.Errorf("run_wait: the user's answer (%s) to %s's plan: %w", verdict, v.RunID, err)
	}
	a := s.answered(ctx, out)
	a.Verdict = verdict.String()
	return &a, nil
}

// multiRoundTrip reports whether the client of ss speaks the protocol
// whose clients retry an input-required call themselves (2026-07-28 and
// later); the SDK answers an older client's once, for it.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}
