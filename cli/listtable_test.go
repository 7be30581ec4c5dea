package cli

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// TestListTableIsTheSimpleOne: listTable, written to print 10,000
// rows without a string per line, prints what the plain version it
// replaced printed (kept below as the reference), for random listings:
// long and short run ids (the split layout), goals with runs of white
// space, control characters and multi-byte runes, branches, usage,
// stopped and unmerged runs, at several widths.
func TestListTableIsTheSimpleOne(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"fix", "the", "parser", "évaluer", "  ", "\t", "\n", " ", "日本語", "x", "\u00a0", "a-very-long-word-that-goes-on-and-on"}
	text := func(n int) string {
		var b strings.Builder
		for range r.IntN(n) {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	zone := time.FixedZone("CET", 3600)
	for round := range 300 {
		views := make([]runview.Run, r.IntN(6))
		for i := range views {
			v := runview.Run{RunID: fmt.Sprintf("r-2026%04d-%s", r.IntN(10000), strings.Repeat("x", r.IntN(3)*r.IntN(40))),
				Status: []string{"running", "completed", "failed", "awaiting_approval"}[r.IntN(4)],
				Goal:   text(30), CreatedAt: time.Unix(r.Int64N(2e9), 0), CurrentPhase: r.IntN(5),
				Stopped: r.IntN(4) == 0, Unmerged: r.IntN(3) == 0}
			if r.IntN(2) == 0 {
				v.Branch = "gaffer/" + v.RunID
			}
			if r.IntN(2) == 0 {
				v.Phases = make([]runview.RunPhase, 1+r.IntN(12))
			}
			if r.IntN(2) == 0 {
				v.Usage = map[string]state.Usage{"developer": {InputTokens: r.IntN(1000), CostUSD: r.Float64()}, "reviewer": {CostUSD: r.Float64() / 10}}
			}
			views[i] = v
		}
		cols := []int{0, 40, 80, 120, 200}[r.IntN(5)]
		var got, want strings.Builder
		if err := writeListTable(&got, views, zone, cols); err != nil {
			t.Fatal(err)
		}
		if err := writeListTableSimple(&want, views, zone, cols); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("round %d, %d columns: got\n%s\nwant\n%s", round, cols, got.String(), want.String())
		}
		for _, v := range views {
			if g, w := listGoal(v.Goal), listGoalSimple(v.Goal); g != w {
				t.Fatalf("listGoal(%q) = %q, want %q", v.Goal, g, w)
			}
		}
	}
}

// writeListTable prints views through a listTable, as list does.
func writeListTable(w io.Writer, views []runview.Run, zone *time.Location, cols int) error {
	t := newListTable(zone, len(views))
	for i := range views {
		t.add(&views[i], totalOf(views[i].Usage))
	}
	return t.write(w, cols)
}

// The reference: list's table and goal as first written.

func writeListTableSimple(w io.Writer, views []runview.Run, zone *time.Location, cols int) error {
	cols = max(cols, 40)
	head := []string{"RUN", "STATUS", "PHASE", fmt.Sprintf("CREATED (%s)", zone), "COST"}
	rows := make([][]string, 0, len(views))
	for _, v := range views {
		phase := "-"
		if len(v.Phases) > 0 {
			phase = fmt.Sprintf("%d/%d", v.CurrentPhase, len(v.Phases))
		}
		rows = append(rows, []string{v.RunID, listStatus(v), phase, v.CreatedAt.In(zone).Format(time.DateTime), listCost(totalOf(v.Usage))})
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
		out.WriteString(cut("  "+listDetailSimple(v), cols) + "\n")
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

func listGoalSimple(goal string) string {
	g := strings.Join(strings.Fields(goal), " ")
	if utf8.RuneCountInString(g) <= listGoalRunes {
		return g
	}
	return strings.TrimRight(string([]rune(g)[:listGoalRunes-1]), " ") + "…"
}

func listDetailSimple(v runview.Run) string {
	goal := listGoalSimple(v.Goal)
	if v.Branch == "" {
		return goal
	}
	b := v.Branch
	if v.Unmerged {
		b = "unmerged: " + b
	}
	return b + " · " + goal
}
