package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/workspace"
	ucli "github.com/urfave/cli/v2"
)

// unmergedBranches is the runs' branches (gaffer/…) that hold commits the
// repository's current branch lacks, by one git call; nil when the
// repository cannot be read (list then says nothing of merges).
func unmergedBranches(c *ucli.Context) map[string]bool {
	return unmergedUnder(c, host.ForkBranchPrefix)
}

// unmergedUnder is unmergedBranches of the branches under prefix: status
// asks of its run's branch alone (git reads the one ref, not 10,000).
func unmergedUnder(c *ucli.Context, prefix string) map[string]bool {
	g, _, err := globalsOf(c)
	if err != nil {
		return nil
	}
	repo, err := workspace.Open(g.Repo)
	if err != nil {
		return nil
	}
	m, err := repo.Unmerged(c.Context, prefix)
	if err != nil {
		return nil
	}
	return m
}

// listStatus is a run's STATUS cell in list: "stopped" for a run no
// process runs (a footnote says what to do), its status otherwise.
func listStatus(v runview.Run) string {
	if v.Stopped {
		return "stopped"
	}
	return v.Status
}

// Footnotes of list, each at most 80 columns.
const (
	listStoppedNote  = "stopped: no process runs it; gaffer status RUN says why, gaffer resume RUN\n  continues it."
	listUnmergedNote = "unmerged: its branch holds commits your current branch lacks; gaffer merge RUN\n  takes them."
)

// writeListTable prints views as list does, every line at most cols
// columns wide (80 at the least considered): one row of RUN, STATUS,
// PHASE, CREATED and COST per run, then a line with its branch (and
// whether it is merged) and its goal, cut to fit. A run id too long for
// the row puts the row's cells on a line of their own under it.
func writeListTable(w io.Writer, views []runview.Run, zone *time.Location, cols int) error {
	cols = max(cols, 40)
	head := []string{"RUN", "STATUS", "PHASE", fmt.Sprintf("CREATED (%s)", zone), "COST"}
	rows := make([][]string, 0, len(views))
	for _, v := range views {
		phase := "-"
		if len(v.Phases) > 0 {
			phase = fmt.Sprintf("%d/%d", v.CurrentPhase, len(v.Phases))
		}
		rows = append(rows, []string{v.RunID, listStatus(v), phase, v.CreatedAt.In(zone).Format(time.DateTime), listCost(v.Usage)})
	}
	widths := make([]int, len(head))
	for _, r := range append([][]string{head}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := 0
	for _, wd := range widths {
		total += wd + 2
	}
	// Too wide (long run ids): the id alone on its line, the cells
	// after it indented below.
	split := total-2 > cols
	line := func(r []string) string {
		var b strings.Builder
		for i, c := range r {
			if split && i == 0 {
				b.WriteString(c + "\n  ")
				continue
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		return b.String()
	}
	var out strings.Builder
	if split {
		out.WriteString(line(append([]string{"RUN"}, head[1:]...)) + "\n")
		widths[0] = 0
	} else {
		out.WriteString(line(head) + "\n")
	}
	stopped, unmerged := false, false
	for i, v := range views {
		out.WriteString(line(rows[i]) + "\n")
		out.WriteString(cut("  "+listDetail(v), cols) + "\n")
		stopped = stopped || v.Stopped
		unmerged = unmerged || v.Unmerged
	}
	if stopped || unmerged {
		out.WriteString("\n")
	}
	if stopped {
		out.WriteString(listStoppedNote + "\n")
	}
	if unmerged {
		out.WriteString(listUnmergedNote + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// listDetail is a run's second line in list: its branch, after
// "unmerged: " when it holds work the current branch lacks, and its goal
// on one line.
func listDetail(v runview.Run) string {
	goal := listGoal(v.Goal)
	if v.Branch == "" {
		return goal
	}
	b := v.Branch
	if v.Unmerged { // first: a long branch is cut at the line's end
		b = "unmerged: " + b
	}
	return b + " · " + goal
}

// cut is s cut to cols runes, ending in "…" when it was longer.
func cut(s string, cols int) string {
	if utf8.RuneCountInString(s) <= cols {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:cols-1]), " ") + "…"
}
