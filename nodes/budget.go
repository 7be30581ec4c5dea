package nodes

import (
	"context"
	"fmt"

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
