package recovery

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SpentFraction returns the share of the budget spent, unclamped: the
// larger of the cost and token shares, so a run that spent 10,200 tokens
// of 1,000 has spent 10.2 (1,020%). 0 with no limits; +Inf for a spend
// that is not a number.
func (b Budget) SpentFraction() float64 {
	spent := 0.0
	if b.MaxCostUSD > 0 {
		f := b.SpentUSD / b.MaxCostUSD
		if f != f {
			f = math.Inf(1)
		}
		spent = max(spent, f)
	}
	if b.MaxTokens > 0 {
		spent = max(spent, float64(b.SpentTokens)/float64(b.MaxTokens))
	}
	return spent
}

// Over returns the limits the run has spent in full, each with its key,
// the spend and its true share: "max_run_tokens 1,000: 10,200 tokens
// spent (1,020%)". None while the budget lasts (or there is none).
func (b Budget) Over() []string {
	var out []string
	if b.MaxCostUSD > 0 && !(b.SpentUSD < b.MaxCostUSD) {
		out = append(out, fmt.Sprintf("max_run_cost_usd %s: $%s spent (%s)", dollars(b.MaxCostUSD), dollars(b.SpentUSD), Percent(b.SpentUSD/b.MaxCostUSD)))
	}
	if b.MaxTokens > 0 && b.SpentTokens >= b.MaxTokens {
		out = append(out, fmt.Sprintf("max_run_tokens %s: %s tokens spent (%s)", Thousands(b.MaxTokens), Thousands(b.SpentTokens), Percent(float64(b.SpentTokens)/float64(b.MaxTokens))))
	}
	return out
}

// Figures names the run's limits and what was spent against each, for a
// reason that mentions the budget: "max_run_tokens 1,000, 900 spent".
// "" with no limits.
func (b Budget) Figures() string {
	var out []string
	if b.MaxCostUSD > 0 {
		out = append(out, fmt.Sprintf("max_run_cost_usd %s, $%s spent", dollars(b.MaxCostUSD), dollars(b.SpentUSD)))
	}
	if b.MaxTokens > 0 {
		out = append(out, fmt.Sprintf("max_run_tokens %s, %s spent", Thousands(b.MaxTokens), Thousands(b.SpentTokens)))
	}
	return strings.Join(out, "; ")
}

// BudgetSpentPrefix begins every BudgetSpentWhy reason.
const BudgetSpentPrefix = "the run budget is spent: "

// BudgetSpentWhy is the reason a run stops at its budget: the limits
// spent (Over) and the key to raise; "" while the budget lasts.
func BudgetSpentWhy(b Budget) string {
	over := b.Over()
	switch len(over) {
	case 0:
		return ""
	case 1:
		return BudgetSpentPrefix + over[0] + " (raise it under limits: in gaffer.yaml)"
	}
	return BudgetSpentPrefix + strings.Join(over, ", ") + " (raise them under limits: in gaffer.yaml)"
}

// Percent renders a share as a whole percentage with thousands
// separators: 10.2 is "1,020%".
func Percent(f float64) string {
	if f != f || f > 1e15 {
		return "∞%"
	}
	return Thousands(int(f*100+0.5)) + "%"
}

// Thousands renders n with commas between groups of three digits.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func dollars(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
