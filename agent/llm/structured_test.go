package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/internal/fakellm"
)

func TestRunStructuredWithLLMDriver(t *testing.T) {
	tl := newTestLLM(t, ProviderOpenAI, Config{},
		fakellm.Turn{Text: "Looks good to me.", Input: 3},
		fakellm.Turn{Text: "```json\n{\"approved\": false, \"comments\": \"add a test\"}\n```", Input: 4},
	)
	var msgs []agent.Message
	s := agent.Session{Role: agent.RoleReviewer, Prompt: "review", Dir: t.TempDir(), OnMessage: func(m agent.Message) { msgs = append(msgs, m) }}
	rv, rep, err := agent.RunStructured(context.Background(), tl.d, s, agent.ParseReview)
	if err != nil || rv.Approved || rv.Comments != "add a test" {
		t.Fatalf("got %+v, %v", rv, err)
	}
	if rep.Usage.InputTokens != 7 || len(msgs) != 4 {
		t.Errorf("usage %+v, %d messages", rep.Usage, len(msgs))
	}
	if !strings.Contains(tl.srv.Last().LastUser, "could not be read") || !strings.Contains(tl.srv.Last().Body, "Looks good to me.") {
		t.Errorf("the retry did not continue the conversation: %s", tl.srv.Last().Body)
	}
}
