package cli

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
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

// listTable is list's table, made a run at a time (add) and then printed
// (write), every line at most cols columns wide (80 at the least
// considered): one row of RUN, STATUS, PHASE, CREATED and COST per run,
// then a line with its branch (and whether it is merged) and its goal,
// cut to fit. A run id too long for the row puts the row's cells on a
// line of their own under it.
//
// A listing may have 10,000 rows: it keeps their cells, not their views,
// each cell is made once, and the lines go out through one buffer rather
// than a string per line.
type listTable struct {
	zone              *time.Location
	rows              []listRow
	details           []string // each run's second line, before it is cut
	stopped, unmerged bool
	stamp             []byte
}

func newListTable(zone *time.Location, n int) *listTable {
	return &listTable{zone: zone, rows: make([]listRow, 0, n), details: make([]string, 0, n)}
}

// add makes v's row.
func (t *listTable) add(v *runview.Run, total state.Usage) {
	phase := "-"
	if len(v.Phases) > 0 {
		phase = strconv.Itoa(v.CurrentPhase) + "/" + strconv.Itoa(len(v.Phases))
		// A phase whose lanes are at work says so: "2/4 (3 lanes)".
		if i := v.CurrentPhase - 1; !v.Stopped && i >= 0 && i < len(v.Phases) && v.Phases[i].Lanes > 1 {
			phase += " (" + strconv.Itoa(v.Phases[i].Lanes) + " lanes)"
		}
	}
	if v.Deleted {
		t.rows = append(t.rows, listRow{v.RunID, v.Status, phase, "-", "-"})
		t.details = append(t.details, listDetail(*v))
		t.unmerged = true
		return
	}
	t.stamp = v.CreatedAt.In(t.zone).AppendFormat(t.stamp[:0], time.DateTime)
	t.rows = append(t.rows, listRow{v.RunID, listStatus(*v), phase, string(t.stamp), listCost(total)})
	t.details = append(t.details, listDetail(*v))
	t.stopped = t.stopped || v.Stopped
	t.unmerged = t.unmerged || v.Unmerged
}

// write prints the table, every line at most cols columns wide.
func (t *listTable) write(w io.Writer, cols int) error {
	cols = max(cols, 40)
	head := listRow{"RUN", "STATUS", "PHASE", fmt.Sprintf("CREATED (%s)", t.zone), "COST"}
	var widths [len(listRow{})]int
	for i, c := range head {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, r := range t.rows {
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
	bw := bufio.NewWriterSize(w, 64<<10)
	line := func(r listRow) {
		for i, c := range r {
			bw.WriteString(c)
			switch {
			case split && i == 0:
				bw.WriteString("\n  ")
			case i < len(r)-1:
				pad(bw, widths[i]-utf8.RuneCountInString(c)+2)
			}
		}
		bw.WriteByte('\n')
	}
	line(head)
	for i, r := range t.rows {
		line(r)
		if detail := t.details[i]; utf8.RuneCountInString(detail)+2 <= cols {
			bw.WriteString("  ")
			bw.WriteString(detail)
		} else {
			bw.WriteString(cut("  "+detail, cols))
		}
		bw.WriteByte('\n')
	}
	if t.stopped || t.unmerged {
		bw.WriteString("\n")
	}
	if t.stopped {
		bw.WriteString(listStoppedNote + "\n")
	}
	if t.unmerged {
		bw.WriteString(listUnmergedNote + "\n")
	}
	return bw.Flush()
}

// listRow is one row of list's table: RUN, STATUS, PHASE, CREATED, COST.
type listRow [5]string

// spaces pads list's cells.
const spaces = "                                                                "

// pad writes n spaces.
func pad(w *bufio.Writer, n int) {
	for n > 0 {
		k := min(n, len(spaces))
		w.WriteString(spaces[:k])
		n -= k
	}
}

// listDetail is a run's second line in list: its branch, after
// "unmerged: " when it holds work the current branch lacks, and its goal
// on one line; for a deleted run whose branch was kept, what that branch
// is.
func listDetail(v runview.Run) string {
	if v.Deleted {
		return "deleted run, unmerged work on " + v.Branch
	}
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
