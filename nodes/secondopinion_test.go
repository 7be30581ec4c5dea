package nodes

import (
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// splitRevision splits task 2 of twoPhasePlan in two, keeping its type:
// the mechanical checks pass, the tasks are rewritten.
const splitRevision = `'{"approach":"do the sum in two steps","tasks":[{"id":"2a","title":"implement the parser","type":"impl"},{"id":"2b","title":"implement the evaluator","type":"impl"}]}'`

// secondOpinionScript fails phase 2 twice alike; the replanner splits
// it and the reviewer model says no.
func secondOpinionScript() string {
	return phase1OK + goFail(1, "12", "/tmp/go-build111") + goFail(2, "57", "/tmp/go-build999") + `
  - phase: 2
    attempt: 3
    actions:
      - write: {path: impl.txt, content: "good\n"}
replanner:
  - phase: 2
    answer: ` + splitRevision + `
reviewer:
  - phase: 2
    second_opinion: true
    approved: false
    comments: the evaluator task no longer evaluates the sum the goal asks for
    usage: {input_tokens: 900, output_tokens: 40}
`
}

// The reviewer model's no refuses a revision the mechanical checks pass,
// and says so in the decisions and the question; its tokens are the
// reviewer's. A checkpoint lost from the failure that reserves the
// replan on (the last ones: the earlier are TestCrashAtEveryCheckpoint's)
// asks it at most once more, and every run ends waiting on the same
// question with the same records.
func TestSecondOpinionRefusesAndSurvivesCrashes(t *testing.T) {
	t.Parallel()
	cfg := on()
	cfg.Agents.Reviewer.Model = "rev-m"
	ref := newHarness(t, secondOpinionScript())
	res, err := ref.start(twoPhasePlan, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q, ok := PendingQuestion(res.State)
	if !ok || q.Decision != "narrowing_revision" || !strings.Contains(strings.Join(q.Problems, "\n"), "the reviewer model rev-m says the revision no longer delivers the goal") {
		t.Fatalf("question %+v, want the revision refused for the reviewer's no", q)
	}
	if u := res.State.Usage[string(agent.RoleReviewer)]; u.InputTokens != 900 {
		t.Fatalf("reviewer usage %+v, want the second opinion's 900 tokens", u)
	}
	seconds := func(h *harness) []agent.Session {
		rvs, _ := h.rec.of(agent.RoleReviewer)
		var out []agent.Session
		for _, s := range rvs {
			if s.Revision > 0 {
				out = append(out, s)
			}
		}
		return out
	}
	if ss := seconds(ref); len(ss) != 1 || !strings.Contains(ss[0].Prompt, "<goal-anchor>") || !strings.Contains(ss[0].Prompt, "implement the evaluator") {
		t.Fatalf("%d second opinions; want one that carries the anchor and the revision", len(ss))
	}
	rs := recoveryOf(t, res.State)
	want := ref.git("status", "--porcelain", "--untracked-files=all")
	puts := ref.store.puts.Load()
	again := 0
	for k := max(puts-4, 2); k <= puts; k++ {
		h := newHarness(t, secondOpinionScript())
		h.failAt(k)
		res, err := h.start(twoPhasePlan, cfg)
		res, err = h.resumeCrashed(k, res, err)
		if err != nil {
			t.Fatalf("checkpoint %d lost: %v", k, err)
		}
		got := recoveryOf(t, res.State)
		if got.Last == nil || got.Last.Decision != "replan:refused" || got.Decisions != rs.Decisions {
			t.Fatalf("checkpoint %d lost: last decision %+v of %d, want replan:refused of %d", k, got.Last, got.Decisions, rs.Decisions)
		}
		switch ss := seconds(h); len(ss) {
		case 1:
		case 2:
			again++
		default:
			t.Fatalf("checkpoint %d lost: %d second opinions, want 1 or 2", k, len(ss))
		}
		if st := h.git("status", "--porcelain", "--untracked-files=all"); st != want {
			t.Fatalf("checkpoint %d lost: tree\n%s\nwant\n%s", k, st, want)
		}
	}
	if again == 0 {
		t.Fatal("no lost checkpoint cut the second opinion off: the crash window was missed")
	}
	// Without a reviewer model the same revision stands.
	h := newHarness(t, secondOpinionScript())
	res, err = h.start(twoPhasePlan, on())
	if s := mustDone(t, res, err, state.RunCompleted); recoveryOf(t, s).Memory.Phase(1).ReplansAccepted != 1 || len(seconds(h)) != 0 {
		t.Fatal("without a reviewer model the split should stand, unasked")
	}
}
