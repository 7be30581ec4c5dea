package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual output")

// TestScripts runs the stories in testdata/*.txt. Each block is a command,
// a line "----" and the output it must print, ended by a blank line:
//
//	run <id>                   start a run of the review graph
//	resume <id> [json]         resume it, answering an interrupt with json
//	fail <node> / fix <node>   make a node fail from now on / stop failing
//	history <id>               its checkpoints, newest first
//	fork <id> <seq> <new>      fork a run from a checkpoint
//	update <id> <node> <log..> write a state with this log as if node produced it
//	count                      how many times each node has run
//
// The review graph: plan, then approve asks "ship it?"; "yes" fans out to
// lint and test (their logs merged in branch order), then publish; any
// other answer ends the run.
func TestScripts(t *testing.T) {
	runScripts(t, "testdata/*.txt", func(t *testing.T, store checkpoint.Store) scripted { return newScriptEnv(t, store) })
}

// scripted is a script's environment: do runs one command and returns
// what it prints.
type scripted interface{ do(cmd string) string }

// runScripts runs each script file that glob matches, in the format of
// TestScripts, against a fresh environment on each store (eachStore).
// -rewrite rewrites the file from the memory store's run; the Badger run,
// which reads the file after it, must then agree.
func runScripts(t *testing.T, glob string, newEnv func(*testing.T, checkpoint.Store) scripted) {
	t.Helper()
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		t.Fatalf("no scripts match %s", glob)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			first := true
			eachStore(t, func(t *testing.T, store checkpoint.Store) {
				rewriting := *rewrite && first
				first = false
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				env := newEnv(t, store)
				var out strings.Builder
				for _, b := range parseScript(t, string(data)) {
					out.WriteString(b.prefix)
					got := env.do(b.cmd)
					out.WriteString(b.cmd + "\n----\n" + got + "\n\n")
					if got != b.want && !rewriting {
						t.Errorf("%s:%d: %s\n got:\n%s\nwant:\n%s", file, b.line, b.cmd, got, b.want)
					}
				}
				if rewriting {
					if err := os.WriteFile(file, []byte(strings.TrimSuffix(out.String(), "\n")), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			})
		})
	}
}

type scriptBlock struct {
	prefix string // comments and blank lines before the command
	cmd    string
	want   string
	line   int
}

func parseScript(t *testing.T, s string) []scriptBlock {
	lines := strings.Split(s, "\n")
	var blocks []scriptBlock
	var prefix strings.Builder
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "#") {
			prefix.WriteString(l + "\n")
			continue
		}
		b := scriptBlock{prefix: prefix.String(), cmd: l, line: i + 1}
		prefix.Reset()
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("line %d: command %q without ----", i+1, l)
		}
		var want []string
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
			want = append(want, lines[i])
		}
		b.want = strings.Join(want, "\n")
		blocks = append(blocks, b)
	}
	return blocks
}

// nodeTally counts the runs of a script environment's nodes and says which
// are made to fail; fan-out branches call it at once.
type nodeTally struct {
	mu      sync.Mutex
	failing map[string]bool
	counts  map[string]int
}

func newNodeTally() nodeTally {
	return nodeTally{failing: map[string]bool{}, counts: map[string]int{}}
}

// ran counts a run of name (a node, or a task).
func (c *nodeTally) ran(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[name]++
}

// fails reports whether what is made to fail.
func (c *nodeTally) fails(what string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failing[what]
}

// failFix runs the commands "fail <what>" and "fix <what>".
func (c *nodeTally) failFix(f []string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failing[argAt(f, 1)] = f[0] == "fail"
	return "ok"
}

// show runs the command "count": how many times each of names ran.
func (c *nodeTally) show(names ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, c.counts[n])
	}
	return strings.Join(parts, " ")
}

// argAt returns the i-th word of a command, or "" past its end.
func argAt(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// resumeOptions returns the options of the command "resume <id> [json]":
// WithResume of the json, or none without it.
func resumeOptions(f []string) ([]graph.ResumeOption, error) {
	if len(f) <= 2 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(strings.Join(f[2:], " ")), &v); err != nil {
		return nil, err
	}
	return []graph.ResumeOption{graph.WithResume(v)}, nil
}

// showRun shows a Run's or Resume's result, its state shown by show.
func showRun[S any](res graph.Result[S], err error, show func(S) string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	s := fmt.Sprintf("%s seq=%d %s", res.Status, res.Seq, show(res.State))
	if in := res.Interrupt; in != nil {
		s += fmt.Sprintf(" waiting=%s/%s#%d %s", in.Node, in.Kind, in.Index, in.Payload)
	}
	return s
}

// showSteps shows a run's history, newest first, its states shown by show.
func showSteps[S any](hist []graph.Snapshot[S], err error, show func(S) string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var lines []string
	for _, h := range hist {
		line := fmt.Sprintf("seq=%d step=%d ran=%v next=%v %s %s", h.Seq, h.Step, h.Ran, h.Next, h.Status, show(h.State))
		if in := h.Interrupt; in != nil {
			line += fmt.Sprintf(" waiting=%s/%s#%d", in.Node, in.Kind, in.Index)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

type scriptEnv struct {
	t *testing.T
	r *graph.Runner[trail]
	nodeTally
}

func newScriptEnv(t *testing.T, store checkpoint.Store) *scriptEnv {
	e := &scriptEnv{t: t, nodeTally: newNodeTally()}
	node := func(name string) graph.NodeFunc[trail] {
		return func(_ context.Context, s trail) (trail, error) {
			e.ran(name)
			if e.fails(name) {
				return s, fmt.Errorf("%s is broken", name)
			}
			return s.with(name), nil
		}
	}
	approve := func(ctx context.Context, s trail) (trail, error) {
		e.ran("approve")
		raw, err := graph.Interrupt(ctx, "ship it?")
		if err != nil {
			return s, err
		}
		var answer string
		if err := json.Unmarshal(raw, &answer); err != nil {
			return s, err
		}
		return s.with("approve=" + answer), nil
	}
	afterApprove := func(_ context.Context, s trail) ([]string, error) {
		if s.Log[len(s.Log)-1] == "approve=yes" {
			return []string{"lint", "test"}, nil
		}
		return []string{graph.END}, nil
	}
	g := graph.New[trail]().
		AddNode("plan", node("plan")).
		AddNode("approve", approve).
		AddNode("lint", node("lint")).
		AddNode("test", node("test")).
		AddNode("publish", node("publish")).
		AddEdge(graph.START, "plan").
		AddEdge("plan", "approve").
		AddConditionalEdge("approve", afterApprove, "lint", "test", graph.END).
		AddEdge("lint", "publish").
		AddEdge("test", "publish").
		AddEdge("publish", graph.END)
	e.r = mustCompile(t, g, graph.WithStore(store), graph.WithMerge(mergeTrails), graph.WithClock(fixedClock()))
	return e
}

func (e *scriptEnv) do(cmd string) string {
	ctx := context.Background()
	f := strings.Fields(cmd)
	arg := func(i int) string { return argAt(f, i) }
	switch f[0] {
	case "run":
		return showResult(e.r.Run(ctx, arg(1), trail{}))
	case "resume":
		opts, err := resumeOptions(f)
		if err != nil {
			return "bad json: " + err.Error()
		}
		return showResult(e.r.Resume(ctx, arg(1), opts...))
	case "fail", "fix":
		return e.failFix(f)
	case "count":
		return e.show("plan", "approve", "lint", "test", "publish")
	case "history":
		hist, err := e.r.History(ctx, arg(1), 0)
		if err != nil {
			return "error: " + err.Error()
		}
		var lines []string
		for _, h := range hist {
			lines = append(lines, showSnapshot(h))
		}
		return strings.Join(lines, "\n")
	case "fork":
		seq, _ := strconv.ParseUint(arg(2), 10, 64)
		s, err := e.r.Fork(ctx, arg(1), seq, arg(3))
		if err != nil {
			return "error: " + err.Error()
		}
		return showSnapshot(s)
	case "update":
		s, err := e.r.UpdateState(ctx, arg(1), trail{N: len(f) - 3, Log: slices.Clone(f[3:])}, arg(2))
		if err != nil {
			return "error: " + err.Error()
		}
		return showSnapshot(s)
	}
	return "unknown command " + f[0]
}

func showResult(res graph.Result[trail], err error) string {
	if err != nil {
		msg := err.Error()
		for _, s := range []error{graph.ErrRunDone, graph.ErrNotInterrupted, graph.ErrInterrupted, graph.ErrRunExists} {
			if errors.Is(err, s) {
				msg = s.Error()
			}
		}
		return "error: " + msg
	}
	s := fmt.Sprintf("%s seq=%d log=%v", res.Status, res.Seq, res.State.Log)
	if in := res.Interrupt; in != nil {
		s += fmt.Sprintf(" waiting=%s/%s#%d %s", in.Node, in.Kind, in.Index, in.Payload)
	}
	return s
}

func showSnapshot(s graph.Snapshot[trail]) string {
	out := fmt.Sprintf("%s seq=%d parent=%d step=%d ran=%v next=%v %s log=%v",
		s.RunID, s.Seq, s.Parent, s.Step, s.Ran, s.Next, s.Status, s.State.Log)
	if in := s.Interrupt; in != nil {
		out += fmt.Sprintf(" waiting=%s/%s#%d", in.Node, in.Kind, in.Index)
	}
	if src := s.Meta[graph.MetaSource]; src != "loop" {
		out += " (" + src + ")"
	}
	return out
}
