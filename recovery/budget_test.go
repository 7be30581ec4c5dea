package recovery

import (
	"math"
	"testing"
)

// The figures of a spent budget are true, past 100%, and name the key.
func TestBudgetOverTellsTheTruth(t *testing.T) {
	for _, c := range []struct {
		name  string
		b     Budget
		frac  float64
		why   string
		left  float64
		figur string
	}{
		{"tokens ten times over", Budget{MaxTokens: 1000, SpentTokens: 10200}, 10.2,
			"the run budget is spent: max_run_tokens 1,000: 10,200 tokens spent (1,020%) (raise it under limits: in gaffer.yaml)", 0, "max_run_tokens 1,000, 10,200 spent"},
		{"exactly spent", Budget{MaxTokens: 1000, SpentTokens: 1000}, 1,
			"the run budget is spent: max_run_tokens 1,000: 1,000 tokens spent (100%) (raise it under limits: in gaffer.yaml)", 0, "max_run_tokens 1,000, 1,000 spent"},
		{"under", Budget{MaxTokens: 1000, SpentTokens: 999}, 0.999, "", 0.001, "max_run_tokens 1,000, 999 spent"},
		{"both", Budget{MaxTokens: 10, SpentTokens: 20, MaxCostUSD: 1, SpentUSD: 1.5}, 2,
			"the run budget is spent: max_run_cost_usd 1.00: $1.50 spent (150%), max_run_tokens 10: 20 tokens spent (200%) (raise them under limits: in gaffer.yaml)", 0,
			"max_run_cost_usd 1.00, $1.50 spent; max_run_tokens 10, 20 spent"},
		{"no limits", Budget{SpentTokens: 1 << 30}, 0, "", 1, ""},
		{"NaN spend", Budget{MaxCostUSD: 1, SpentUSD: math.NaN()}, math.Inf(1), "the run budget is spent: max_run_cost_usd 1.00: $NaN spent (∞%) (raise it under limits: in gaffer.yaml)", 0, "max_run_cost_usd 1.00, $NaN spent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.SpentFraction(); math.Abs(got-c.frac) > 1e-9 && !(math.IsInf(got, 1) && math.IsInf(c.frac, 1)) {
				t.Errorf("SpentFraction = %v, want %v", got, c.frac)
			}
			if got := BudgetSpentWhy(c.b); got != c.why {
				t.Errorf("BudgetSpentWhy =\n%q\nwant\n%q", got, c.why)
			}
			if got := c.b.Remaining(); math.Abs(got-c.left) > 1e-9 {
				t.Errorf("Remaining = %v, want %v", got, c.left)
			}
			if got := c.b.Figures(); got != c.figur {
				t.Errorf("Figures = %q, want %q", got, c.figur)
			}
		})
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
