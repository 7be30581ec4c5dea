package nodes

import (
	"context"
	"fmt"
	"sync"

	"github.com/gaffer-dev/gaffer/recovery"
	"github.com/gaffer-dev/gaffer/state"
)

// decisionRunBudget is the question (and its decision record) of a run
// that spent its budget (limits.max_run_tokens, max_run_cost_usd).
const decisionRunBudget = "run_budget"

// runBudget is the run's budget as the budget stop measures it: the
// limits, raised by what was spent when a human last answered the stop
// with retry (recoveryState.Granted), so that answer buys one budget
// more, not the rest of the run.
func runBudget(s state.ExecutionState, rs recoveryState) recovery.Budget {
	b := budgetOf(s)
	if b.MaxTokens > 0 {
		b.MaxTokens += rs.Granted.SpentTokens
	}
	if b.MaxCostUSD > 0 {
		b.MaxCostUSD += rs.Granted.SpentUSD
	}
	return b
}

// budgetStop stops the run before the developer session of phase ps
// when its budget is spent. With recovery on the run waits for a human
// (resumable: `gaffer approve RUN --decision retry` grants one budget
// more, stop halts it); the decision record, its event, status and the
// halt message name the key and the true figures. With recovery off it
// halts. It reports whether it stopped.
func (w *workflow) budgetStop(ctx context.Context, s state.ExecutionState, ps state.PhaseState) (state.ExecutionState, bool, error) {
	if s.Config.Limits.MaxRunTokens <= 0 && s.Config.Limits.MaxRunCostUSD <= 0 {
		return s, false, nil
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return s, false, err
	}
	why := recovery.BudgetSpentWhy(runBudget(s, rs))
	if why == "" {
		return s, false, nil
	}
	why = fmt.Sprintf("%s, before phase %d, attempt %d", why, ps.Index+1, ps.Attempt)
	if !recoveryOn(s) {
		c, err := w.halt(ctx, s, ps, why)
		return c, true, err
	}
	rs = w.decide(ctx, s, rs, ps, decisionRunBudget, why)
	c, err := w.toHuman(ctx, s, rs, ps, decisionRunBudget, why, nil)
	return c, true, err
}

// PendingQuestion returns the question recovery is waiting on a human
// for, if any: what status shows of a run awaiting approval that is not
// waiting for its plan's.
func PendingQuestion(s state.ExecutionState) (*Question, bool) {
	rs, err := loadRecovery(s)
	if err != nil || rs.Stage != stageAsk || rs.Question == nil {
		return nil, false
	}
	return rs.Question, true
}

// laneSpend is what the lanes of one phase attempt spent in this process,
// and how many of them run: a lane's usage reaches the run's state only
// when the phase's lanes are merged, so the check before a lane starts
// adds it, and reserves for each lane running the mean of those finished.
type laneSpend struct {
	mu       sync.Mutex
	done     state.Usage
	finished int
	running  int
}

func laneSpendKey(s state.ExecutionState, ps state.PhaseState) string {
	return fmt.Sprintf("%s/%d/%d", s.Run.ID, ps.Index, ps.Attempt)
}

// laneBudget reserves the run budget's room for one lane's session of
// phase ps. While the budget, less what the phase's other lanes spent
// and reserve, lasts, it returns "" and the func that gives the session's
// usage back when it ends (only its first call counts); otherwise why
// the lane does not start. So
// lanes running at once overshoot the budget by at most one session each
// (docs/configuration.md, parallel): none starts once it is spent.
func (w *workflow) laneBudget(s state.ExecutionState, ps state.PhaseState, label string) (string, func(state.Usage), error) {
	if s.Config.Limits.MaxRunTokens <= 0 && s.Config.Limits.MaxRunCostUSD <= 0 {
		return "", func(state.Usage) {}, nil
	}
	rs, err := loadRecovery(s)
	if err != nil {
		return "", nil, err
	}
	v, _ := w.spends.LoadOrStore(laneSpendKey(s, ps), &laneSpend{})
	sp := v.(*laneSpend)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	spent := runBudget(s, rs)
	spent.SpentUSD += sp.done.CostUSD
	spent.SpentTokens += sp.done.InputTokens + sp.done.OutputTokens
	held := spent
	if sp.finished > 0 && sp.running > 0 {
		held.SpentUSD += sp.done.CostUSD / float64(sp.finished) * float64(sp.running)
		held.SpentTokens += (sp.done.InputTokens + sp.done.OutputTokens) / sp.finished * sp.running
	}
	if why := recovery.BudgetSpentWhy(spent); why != "" {
		return fmt.Sprintf("%s, before lane %s of phase %d started", why, label, ps.Index+1), nil, nil
	}
	if len(held.Over()) > 0 {
		return fmt.Sprintf("the lanes running are expected to spend the rest of the run budget (%s; %d running, %s each on average), so lane %s of phase %d did not start",
			spent.Figures(), sp.running, usageWords(sp.done, sp.finished), label, ps.Index+1), nil, nil
	}
	sp.running++
	var once sync.Once
	return "", func(u state.Usage) { // the first call counts: a session's end, or a lane stopped before one
		once.Do(func() {
			sp.mu.Lock()
			defer sp.mu.Unlock()
			sp.running--
			sp.finished++
			sp.done = sp.done.Add(u)
		})
	}, nil
}

// usageWords is the mean of n sessions' usage u: "$0.25, 1,200 tokens".
func usageWords(u state.Usage, n int) string {
	if n == 0 {
		return "nothing"
	}
	return fmt.Sprintf("$%.2f, %s tokens", u.CostUSD/float64(n), recovery.Thousands((u.InputTokens+u.OutputTokens)/n))
}
