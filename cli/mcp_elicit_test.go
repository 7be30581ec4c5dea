package cli

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPRunWaitElicitsThePlanApproval drives `gaffer mcp` through the
// binary with the SDK's client declaring elicitation: run_wait on a run
// awaiting its plan's approval asks the user inline, showing the plan,
// and answers the run as they say. The first run's ask is declined:
// nothing is answered (needs_human), the run still awaits approval. Asked
// again, the user rejects it (no feedback: the run ends rejected). The
// second run's ask is accepted: the plan is approved and the wait follows
// the run to its end. A client without the capability gets needs_human, as before
// (TestMCPEveryToolThroughTheBinary).
func TestMCPRunWaitElicitsThePlanApproval(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, planText, script := demoRepoAndPlanText(t)
	var mu sync.Mutex
	var asked []*mcp.ElicitParams
	m := startMCPEliciting(t, bin, dir, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params)
		switch len(asked) {
		case 1:
			return &mcp.ElicitResult{Action: "decline"}, nil
		case 2:
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "feedback": "looks right"}}, nil
	})
	type waited struct {
		Reason      string `json:"reason"`
		Run         mcpRun `json:"run"`
		UserAnswers []struct {
			Verdict, Outcome string
		} `json:"user_answers"`
	}
	firstLine, _, _ := strings.Cut(strings.TrimSpace(string(planText)), "\n")

	var declined mcpStarted
	m.ok("run_start", map[string]any{"plan": string(planText), "script": script}, &declined)
	var w waited
	m.ok("run_wait", map[string]any{"run_id": declined.RunID, "timeout_seconds": 120}, &w)
	if w.Reason != "needs_human" || w.Run.Status == "rejected" || len(w.UserAnswers) != 0 {
		t.Fatalf("run_wait, the ask declined = %+v, want needs_human and nothing answered", w)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0].Message, declined.RunID) || !strings.Contains(asked[0].Message, firstLine) {
		t.Fatalf("asked %+v, want the run's plan shown", asked)
	}
	mu.Unlock()
	w = waited{}
	m.ok("run_wait", map[string]any{"run_id": declined.RunID, "timeout_seconds": 120}, &w)
	if w.Reason != "ended" || w.Run.Status != "rejected" || len(w.UserAnswers) != 1 || w.UserAnswers[0].Verdict != "reject" {
		t.Fatalf("run_wait, the ask rejected = %+v, want the run ended rejected", w)
	}

	// The detached process that took the rejection holds the store until
	// it ends: the next run starts once it has.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res := m.call("run_start", map[string]any{"plan": string(planText), "script": script})
		if !res.IsError || !strings.Contains(resultText(res), "holds the store") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rejecting process still holds the store: %s", resultText(res))
		}
	}
	var accepted mcpStarted
	var list struct {
		Runs []mcpRun `json:"runs"`
	}
	m.ok("runs_list", nil, &list)
	for _, r := range list.Runs {
		if r.RunID != declined.RunID {
			accepted.RunID = r.RunID
		}
	}
	if len(list.Runs) != 2 || accepted.RunID == "" {
		t.Fatalf("runs = %+v, want the declined one and one more", list.Runs)
	}
	w = waited{}
	m.ok("run_wait", map[string]any{"run_id": accepted.RunID, "timeout_seconds": 180}, &w)
	if w.Reason != "ended" || w.Run.Status != "completed" || len(w.UserAnswers) != 1 || w.UserAnswers[0].Verdict != "approve" {
		t.Fatalf("run_wait, the ask accepted = %+v, want the run approved and completed", w)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 || !strings.Contains(asked[2].Message, accepted.RunID) {
		t.Fatalf("asked %d times (%+v), want twice for the first run, once for the second", len(asked), asked)
	}
	var st struct {
		Plan struct {
			Revision int `json:"revision"`
		} `json:"plan"`
		Status string `json:"status"`
	}
	m.ok("run_status", map[string]any{"run_id": declined.RunID}, &st)
	if st.Status != "rejected" {
		t.Errorf("the declined run's status %q, want rejected", st.Status)
	}
}
