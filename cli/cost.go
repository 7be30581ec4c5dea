package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// costText is a cost in US dollars as the CLI prints it.
func costText(usd float64) string { return fmt.Sprintf("$%.4f", usd) }

// writeCost prints what a run's agents used, per role and in total:
//
//	role             input     output     cached       cost
//	developer         1200        300          0    $0.0081
//	total             …
//
// or one line saying that no agent reported usage (the script driver
// without usage entries).
func writeCost(w io.Writer, s state.ExecutionState) {
	total := s.TotalUsage()
	if total == (state.Usage{}) {
		fmt.Fprintln(w, "\nTokens and cost: none reported by the agents.")
		return
	}
	fmt.Fprintln(w, "\nTokens and cost:")
	row := func(role, in, out, cached, cost string) {
		fmt.Fprintf(w, "  %-11s %10s %10s %10s %10s\n", role, in, out, cached, cost)
	}
	row("role", "input", "output", "cached", "cost")
	for _, r := range runview.Roles(s.Usage) {
		u := s.Usage[r]
		row(r, strconv.Itoa(u.InputTokens), strconv.Itoa(u.OutputTokens), strconv.Itoa(u.CachedTokens), costText(u.CostUSD))
	}
	row("total", strconv.Itoa(total.InputTokens), strconv.Itoa(total.OutputTokens), strconv.Itoa(total.CachedTokens), costText(total.CostUSD))
}

// usageText is a run's total usage on one line: "$0.0123 (1200 in, 300
// out, 0 cached tokens)", or "none reported".
func usageText(u state.Usage) string {
	if u == (state.Usage{}) {
		return "none reported"
	}
	return fmt.Sprintf("%s (%d in, %d out, %d cached tokens)", costText(u.CostUSD), u.InputTokens, u.OutputTokens, u.CachedTokens)
}

// totalOf sums the usage of every role.
func totalOf(usage map[string]state.Usage) state.Usage { return state.TotalOf(usage) }

// listCost is the COST column of list: the run's total cost (u, every
// role's usage added up), "-" when no agent reported usage.
func listCost(u state.Usage) string {
	if u == (state.Usage{}) {
		return "-"
	}
	return costText(u.CostUSD)
}
