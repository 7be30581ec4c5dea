package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/state"
)

// vt is a tiny terminal for the live tree's tests: it interprets what the
// screen writes (text, CR, LF as CR LF like a tty's output, cursor up N,
// erase to the end of the screen) into lines, wrapping text at width like
// a terminal does. frames holds what was below the cursor at each erase:
// the frames as they were seen, one after another.
type vt struct {
	width    int
	rows     [][]rune
	row, col int
	frames   [][]string
}

func emulate(t *testing.T, width int, out string) *vt {
	t.Helper()
	v := &vt{width: width}
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '\r':
			v.col = 0
		case '\t':
			v.put(' ')
			for v.col%8 != 0 {
				v.put(' ')
			}
		case '\n':
			v.row, v.col = v.row+1, 0
		case '\x1b':
			j := i + 2
			for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
				j++
			}
			if i+1 >= len(rs) || rs[i+1] != '[' || j >= len(rs) {
				t.Fatalf("unknown escape at %d: %q", i, string(rs[i:min(i+8, len(rs))]))
			}
			n := 1
			if j > i+2 {
				n, _ = strconv.Atoi(string(rs[i+2 : j]))
			}
			switch rs[j] {
			case 'A':
				v.row = max(0, v.row-n)
			case 'J':
				v.erase()
			default:
				t.Fatalf("unknown escape %q", string(rs[i:j+1]))
			}
			i = j
		default:
			if r < ' ' {
				t.Fatalf("unexpected control character %q", r)
			}
			v.put(r)
		}
	}
	return v
}

// put writes r at the cursor, wrapping first at the right margin.
func (v *vt) put(r rune) {
	if v.col == v.width {
		v.row, v.col = v.row+1, 0
	}
	for len(v.rows) <= v.row {
		v.rows = append(v.rows, nil)
	}
	for len(v.rows[v.row]) < v.col {
		v.rows[v.row] = append(v.rows[v.row], ' ')
	}
	if v.col < len(v.rows[v.row]) {
		v.rows[v.row][v.col] = r
	} else {
		v.rows[v.row] = append(v.rows[v.row], r)
	}
	v.col++
}

func (v *vt) erase() {
	var frame []string
	for i := v.row; i < len(v.rows); i++ {
		frame = append(frame, strings.TrimRight(string(v.rows[i]), " "))
	}
	v.frames = append(v.frames, frame)
	if v.row < len(v.rows) {
		v.rows[v.row] = v.rows[v.row][:min(v.col, len(v.rows[v.row]))]
		v.rows = v.rows[:v.row+1]
	}
}

// lines is the final screen, without trailing blank lines.
func (v *vt) lines() []string {
	var ls []string
	for _, r := range v.rows {
		ls = append(ls, strings.TrimRight(string(r), " "))
	}
	for len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func TestScreenKeepsTheFrameBelowEveryLine(t *testing.T) {
	var buf bytes.Buffer
	sc := newScreen(&buf, func() (int, int) { return 20, 10 })
	out, errw := sc.writer(&buf), sc.writer(&buf)
	fmt.Fprint(out, "before\n")
	sc.show([]string{"tree v1", "phase 1 ●"})
	fmt.Fprint(out, "action one\n")
	fmt.Fprint(errw, "level=INFO msg=log\n")
	sc.show([]string{"tree v2", "phase 1 ✓", "a frame line far wider than the terminal"})
	fmt.Fprint(out, "partial ")
	fmt.Fprint(out, "line\n")
	fmt.Fprint(out, "unfinished")
	sc.stop()
	fmt.Fprint(out, "\nafter\n")

	v := emulate(t, 20, buf.String())
	want := []string{"before", "action one", "level=INFO msg=log", "partial line",
		"tree v2", "phase 1 ✓", "a frame line far w…", "unfinished", "after"}
	if got := v.lines(); !slices.Equal(got, want) {
		t.Fatalf("screen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(v.frames); n != 4 { // one erase per line written while live, one per new frame
		t.Fatalf("%d erases, want 4: %q", n, v.frames)
	}
}

func TestScreenClearTakesTheFrameAway(t *testing.T) {
	var buf bytes.Buffer
	sc := newScreen(&buf, func() (int, int) { return 40, 10 })
	out := sc.writer(&buf)
	sc.show([]string{"tree"})
	fmt.Fprint(out, "line\n")
	sc.clear()
	fmt.Fprint(out, "Approve? ")
	if got := emulate(t, 40, buf.String()).lines(); !slices.Equal(got, []string{"line", "Approve?"}) {
		t.Fatalf("screen %q", got)
	}
	sc.show([]string{"tree again"}) // no echo of an answer: the frame goes below the prompt
	fmt.Fprint(out, "next\n")
	sc.stop()
	if got := emulate(t, 40, buf.String()).lines(); !slices.Equal(got, []string{"line", "Approve?", "next", "tree again"}) {
		t.Fatalf("screen %q", got)
	}
}

func TestScreenFitsATallFrameInTheWindow(t *testing.T) {
	sc := newScreen(nil, func() (int, int) { return 40, 5 })
	got := sc.fit([]string{"1", "2", "3", "4", "5", "6"})
	if want := []string{"… 3 more lines", "4", "5", "6"}; !slices.Equal(got, want) {
		t.Fatalf("fit: %q, want %q", got, want)
	}
}

// syncBuffer is output written by a process or an app while the test
// reads it: the fake terminal's output, read by its input too.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// answers is the fake terminal's input: it keeps what the output was when
// each answer was read (what the user saw when answering).
type answers struct {
	in   []string
	out  *syncBuffer
	seen []string
}

func (a *answers) Read(p []byte) (int, error) {
	if len(a.in) == 0 {
		return 0, io.EOF
	}
	a.seen = append(a.seen, a.out.String())
	n := copy(p, a.in[0])
	a.in = a.in[1:]
	return n, nil
}

// runOnTerminal runs args on a fake terminal of 80 columns and returns
// its emulated screen, and what was on it when each answer was read.
func runOnTerminal(t *testing.T, in []string, args ...string) (*vt, []string) {
	t.Helper()
	var out syncBuffer
	ans := &answers{in: in, out: &out}
	app := NewWithIO("test", IO{In: ans, Out: &out, Err: &out, Terminal: func() bool { return true }})
	inProcess.Lock() // see inProcess
	err := app.RunContext(context.Background(), append([]string{"gaffer"}, args...))
	inProcess.Unlock()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return emulate(t, 80, out.String()), ans.seen
}

func linesWith(ls []string, prefix string) []int {
	var at []int
	for i, l := range ls {
		if strings.HasPrefix(l, prefix) {
			at = append(at, i)
		}
	}
	return at
}

// terminalDemoRun runs the demo's plan to the end as runID, on a fake
// terminal (runOnTerminal), and returns the repository and the terminal.
func terminalDemoRun(t *testing.T, runID string) (string, *vt) {
	t.Helper()
	dir, plan, script := demoRepo(t)
	v, _ := runOnTerminal(t, nil, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", runID)
	return dir, v
}

func TestTerminalRunKeepsOneLiveTreeBelowTheActions(t *testing.T) {
	t.Parallel()
	_, v := terminalDemoRun(t, "r-live")
	screen := v.lines()
	trees := linesWith(screen, "Phase 1 (test)")
	if len(trees) != 1 {
		t.Fatalf("%d trees on the screen, want 1:\n%s", len(trees), strings.Join(screen, "\n"))
	}
	head := trees[0] - 1
	if done := linesWith(screen, "Phase 4 (impl): ✓ Completed"); !strings.Contains(screen[head], "[r-live, completed]") || len(done) != 1 || done[0] < head {
		t.Fatalf("the last frame is not the finished run:\n%s", strings.Join(screen, "\n"))
	}

	// The driver's lines are all above the tree, the lines a plain run prints.
	var actions []string
	for _, l := range screen[:head] {
		if strings.HasPrefix(l, "[developer") || strings.HasPrefix(l, "[reviewer") {
			actions = append(actions, l)
		}
	}
	pdir, pplan, pscript := demoRepo(t)
	plain, code := gaffer(t, "--repo", pdir, "run", "--plan", pplan, "--script", pscript, "--auto-approve", "--run-id", "r-live")
	if code != 0 {
		t.Fatalf("plain run: exit %d\n%s", code, plain)
	}
	var want []string
	for _, l := range strings.Split(plain, "\n") {
		if strings.HasPrefix(l, "[developer") || strings.HasPrefix(l, "[reviewer") {
			want = append(want, strings.TrimRight(string([]rune(l)[:min(80, len([]rune(l)))]), " ")) // the rest wrapped
		}
	}
	// A phase's lanes run at once: their lines interleave as the sessions
	// go, so the two runs' lines are compared as sets of lines.
	sortedActions, sortedWant := slices.Sorted(slices.Values(actions)), slices.Sorted(slices.Values(want))
	if len(want) == 0 || !slices.Equal(sortedActions, sortedWant) {
		t.Fatalf("actions above the tree:\n%s\nwant:\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
	}

	// The frames drawn followed the run: phase 1 running, then done with
	// phase 2 running, phase 2's second attempt, phase 4 running.
	steps := []func(frame string) bool{
		func(f string) bool { return strings.Contains(f, "Phase 1 (test): ● Running") },
		func(f string) bool {
			return strings.Contains(f, "Phase 1 (test): ✓ Completed") && strings.Contains(f, "Phase 2 (impl): ● Running")
		},
		func(f string) bool {
			return strings.Contains(f, "Phase 2 (impl): ●") && strings.Contains(f, "attempt 2")
		},
		func(f string) bool { return strings.Contains(f, "Phase 4 (impl): ● Running") },
	}
	for _, f := range v.frames {
		for _, l := range f {
			if n := len([]rune(l)); n >= 80 {
				t.Fatalf("a frame line of %d columns on an 80-column terminal: %q", n, l)
			}
		}
		if len(steps) > 0 && steps[0](strings.Join(f, "\n")) {
			steps = steps[1:]
		}
	}
	if len(steps) > 0 {
		t.Fatalf("%d steps of the run never drawn; frames:\n%q", len(steps), v.frames)
	}
}

func TestTerminalApprovalPromptIsNotDrawnOver(t *testing.T) {
	t.Parallel()
	dir, plan, script := demoRepo(t)
	v, seen := runOnTerminal(t, []string{"a\n"}, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-ask")
	const prompt = "Approve this plan? [a]pprove, [r]eject, [f]eedback (reject and replan):"
	if len(seen) != 1 {
		t.Fatalf("%d answers read, want 1", len(seen))
	}
	if asked := emulate(t, 80, seen[0]).lines(); asked[len(asked)-1] != prompt || len(linesWith(asked, "Plan of run r-ask")) != 1 ||
		len(linesWith(asked, "Phase 1")) != 1 || len(linesWith(asked, "Phase 1 (test)")) != 0 {
		t.Fatalf("the screen when asked, want the whole plan once, no live tree, and the prompt last:\n%s", strings.Join(asked, "\n"))
	}
	screen := v.lines()
	prompts := linesWith(screen, prompt)
	plans := linesWith(screen, "Plan of run r-ask")
	trees := linesWith(screen, "Phase 1 (test)")
	if len(prompts) != 1 || len(plans) != 1 || len(trees) != 1 || !(plans[0] < prompts[0] && prompts[0] < trees[0]) {
		t.Fatalf("want the plan, the prompt, then one final tree:\n%s", strings.Join(screen, "\n"))
	}
	if !strings.HasPrefix(screen[trees[0]], "Phase 1 (test): ✓ Completed") {
		t.Fatalf("trees:\n%s", strings.Join(screen, "\n"))
	}
}

func TestLiveTreeShowsElapsedTimeAndUsage(t *testing.T) {
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	var s state.ExecutionState
	s.Run = state.RunInfo{ID: "r-1", Goal: "calc"}
	s.Status = state.RunRunning
	s.Plan.Tasks = []state.Task{{ID: "1", Title: "Tests", Type: state.TypeTest}, {ID: "2", Title: "Code", Type: state.TypeImpl}}
	s.Plan.Phases = []state.Phase{{Index: 0, TaskIDs: []string{"1"}}, {Index: 1, TaskIDs: []string{"2"}}}
	s.Progress.Phases = []state.PhaseState{
		{Index: 0, Status: state.PhaseCompleted, Attempt: 1, StartedAt: start, CompletedAt: start.Add(time.Minute), PostCommit: "0123456789"},
		{Index: 1, Status: state.PhaseRunning, Attempt: 1, StartedAt: start.Add(time.Minute),
			Lanes: []state.LaneProgress{{Tasks: []string{"2"}, Status: state.LaneDone, Attempt: 1, Iteration: 1}}},
	}
	s.Usage = map[string]state.Usage{"developer": {InputTokens: 1200, OutputTokens: 300, CostUSD: 0.5}, "reviewer": {InputTokens: 800, CostUSD: 0.25}}

	l := &liveTree{now: func() time.Time { return start.Add(time.Minute + 95*time.Second) }, state: s, have: true, node: "review"}
	want := []string{"",
		"calc  [r-1, running]",
		"tokens: 2000 in, 300 out, 0 cached  cost: $0.7500",
		"Phase 1 (test): ✓ Completed (1m0s, 0123456)",
		"  └── ✓ [test] 1 Tests",
		"Phase 2 (impl): ● Running (1m35s, review 1)",
		"  └── ● [impl] 2 Code",
		"» review",
	}
	if got := l.frame(); !slices.Equal(got, want) {
		t.Fatalf("frame:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var plain strings.Builder
	writeRunTree(&plain, s, time.Time{})
	if strings.Contains(plain.String(), "tokens") || strings.Contains(plain.String(), "1m35s") || !strings.HasPrefix(plain.String(), "calc  [r-1]\n") {
		t.Fatalf("writeRunTree without a clock changed:\n%s", plain.String())
	}
}
