package graph_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// TestPortingStories runs the stories in testdata/porting/*.txt, in the
// format of TestScripts, against the desk graph: the newsroom of
// TestStories written as a LangGraph user would, with the API of issue 34
// (reducers, Partial nodes, one router, Ask, a same-type subgraph,
// CacheKey, typed streams, a Func node):
//
//	START ─route─► index (a named node) and write (one send per topic)
//	index, write ─► edit ─route─► legal (a subgraph: read, then ask) ─► publish ─► END
//	                          └─► publish (prints with a durable Task) ─► END
//
// Commands:
//
//	run <id> <topic>...          start a run (the desk is the run's id)
//	resume <id> [json]           resume it, answering an interrupt with json
//	stream <id> <topic>... [/ <branch>...]
//	                             start a run as a stream of updates, values and checkpoints;
//	                             the branches named after "/" (index, or a write's topic)
//	                             finish in that order, each after the update of the one before
//	resume-stream <id> [json]    resume it as such a stream
//	fail <what> / fix <what>     make "write:<topic>" or "print" fail / stop failing
//	count                        how many times each node (and the print task) ran
//	history <id>                 the run's checkpoints, newest first
//	child <id> <path>...         the subgraph run at path (SubgraphAt), its history
func TestPortingStories(t *testing.T) {
	runScripts(t, "testdata/porting/*.txt", func(t *testing.T, store checkpoint.Store) scripted { return newDesk(t, store) })
}

// Desk is the desk graph's state. Articles, Words and Tags have reducers;
// the others are written by one node per step.
type Desk struct {
	Desk     string
	Topics   []string
	Topic    string   // a write branch's input
	Articles []string `graph:"append"`
	Words    int      `graph:"sum"`
	Tags     map[string]int
	Verdict  string
	Printed  string
}

type desk struct {
	t *testing.T
	r *graph.Runner[Desk]
	nodeTally
	turnsMu sync.Mutex
	turns   map[string]chan struct{} // a stream's branch order: closed when a branch may finish
}

// wait waits for the branch's turn, when a stream orders the branches.
func (e *desk) wait(branch string) {
	e.turnsMu.Lock()
	turn := e.turns[branch]
	e.turnsMu.Unlock()
	if turn != nil {
		<-turn
	}
}

func newDesk(t *testing.T, store checkpoint.Store) *desk {
	e := &desk{t: t, nodeTally: newNodeTally()}
	write := func(ctx context.Context, s Desk) (Desk, error) {
		e.ran("write")
		e.wait(s.Topic)
		if e.fails("write:" + s.Topic) {
			return Desk{}, fmt.Errorf("the %s writer is out", s.Topic)
		}
		return Desk{Articles: []string{s.Topic + " story"}, Words: len(s.Topic), Tags: map[string]int{s.Topic: 1}}, nil
	}
	assign := func(_ context.Context, s Desk) (graph.Routes[Desk], error) {
		r := graph.SendEach("write", s.Topics, func(topic string) Desk { return Desk{Topic: topic} })
		r.Nodes = []string{"index"}
		return r, nil
	}
	index := func(s Desk) Desk { // a plain function of the state: it cannot fail (graph.Func)
		e.ran("index")
		e.wait("index")
		return Desk{Tags: map[string]int{"index": len(s.Topics)}}
	}
	edit := func(_ context.Context, s Desk) (graph.Routes[Desk], error) {
		for _, a := range s.Articles {
			if strings.Contains(a, "scandal") {
				return graph.Goto[Desk]("legal"), nil
			}
		}
		return graph.Goto[Desk]("publish"), nil
	}
	publish := func(ctx context.Context, s Desk) (Desk, error) {
		e.ran("publish")
		printed, err := graph.Task(ctx, "print", func(context.Context) (string, error) {
			e.ran("print")
			if e.fails("print") {
				return "", errors.New("the press is jammed")
			}
			return fmt.Sprintf("printed %d articles, %d words", len(s.Articles), s.Words), nil
		})
		return Desk{Printed: printed}, err
	}
	legal := mustCompile(t, graph.New[Desk]().
		AddNode("read", func(_ context.Context, s Desk) (Desk, error) { e.ran("legal/read"); return Desk{}, nil }, graph.Partial()).
		AddNode("ask", func(ctx context.Context, s Desk) (Desk, error) {
			e.ran("legal/ask")
			v, err := graph.Ask[string](ctx, "clear "+strings.Join(s.Articles, ", ")+"?")
			return Desk{Verdict: v}, err
		}, graph.Partial()).
		AddEdge(graph.START, "read").AddEdge("read", "ask").AddEdge("ask", graph.END))
	g := graph.New[Desk]().
		AddNode("index", graph.Func(index), graph.Partial()).
		AddNode("write", write, graph.Partial(), graph.CacheKey(func(s Desk) string { return s.Topic }, 0)).
		AddNode("edit", func(_ context.Context, s Desk) (Desk, error) { e.ran("edit"); return Desk{}, nil }, graph.Partial()).
		AddSubgraph("legal", legal).
		AddNode("publish", publish, graph.Partial()).
		AddRoute(graph.START, assign, "index", "write").
		AddEdge("index", "edit").AddEdge("write", "edit").
		AddRoute("edit", edit, "legal", "publish").
		AddEdge("legal", "publish").
		AddEdge("publish", graph.END).
		Reduce(graph.Reducer(func(s *Desk) *map[string]int { return &s.Tags }, addCounts))
	e.r = mustCompile(t, g, graph.WithStore(store), graph.WithClock(fixedClock()))
	return e
}

func showDesk(s Desk) string {
	out := fmt.Sprintf("desk=%s articles=%q words=%d", s.Desk, s.Articles, s.Words)
	if len(s.Tags) > 0 {
		keys := slices.Sorted(maps.Keys(s.Tags))
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s:%d", k, s.Tags[k]))
		}
		out += " tags=" + strings.Join(parts, ",")
	}
	if s.Verdict != "" {
		out += " verdict=" + s.Verdict
	}
	if s.Printed != "" {
		out += " " + s.Printed
	}
	return out
}

// showUpdate shows what a partial update writes: its non-zero fields.
func showUpdate(s Desk) string {
	var parts []string
	if len(s.Articles) > 0 {
		parts = append(parts, fmt.Sprintf("articles=%q", s.Articles))
	}
	if s.Words != 0 {
		parts = append(parts, fmt.Sprintf("words=%d", s.Words))
	}
	if len(s.Tags) > 0 {
		keys := slices.Sorted(maps.Keys(s.Tags))
		var ts []string
		for _, k := range keys {
			ts = append(ts, fmt.Sprintf("%s:%d", k, s.Tags[k]))
		}
		parts = append(parts, "tags="+strings.Join(ts, ","))
	}
	if s.Verdict != "" {
		parts = append(parts, "verdict="+s.Verdict)
	}
	if s.Printed != "" {
		parts = append(parts, s.Printed)
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func showDeskResult(res graph.Result[Desk], err error) string { return showRun(res, err, showDesk) }

func showDeskHistory(hist []graph.Snapshot[Desk], err error) string {
	return showSteps(hist, err, showDesk)
}

// showStream runs a stream and shows its events. The branches in order
// finish one after the other: each when the update of the one before it
// has been yielded.
func (e *desk) showStream(order []string, events func(yield func(graph.Event, error) bool)) string {
	turns := map[string]chan struct{}{}
	for _, b := range order {
		turns[b] = make(chan struct{})
	}
	e.turnsMu.Lock()
	e.turns = turns
	e.turnsMu.Unlock()
	next := 0
	release := func() {
		if next < len(order) {
			close(turns[order[next]])
			next++
		}
	}
	defer func() {
		for next < len(order) {
			release()
		}
		e.turnsMu.Lock()
		e.turns = nil
		e.turnsMu.Unlock()
	}()
	release()
	var lines []string
	for ev, err := range events {
		if err != nil {
			lines = append(lines, "error: "+err.Error())
			continue
		}
		if ev.Namespace != "" {
			continue
		}
		switch ev.Kind {
		case graph.NodeUpdate:
			u, _ := graph.StateOf[Desk](ev)
			state := fmt.Sprintf("checkpointed seq=%d", ev.Seq)
			if ev.Pending {
				state = "pending"
			}
			lines = append(lines, fmt.Sprintf("update %s#%d %s %s", ev.Node, ev.Branch, showUpdate(u), state))
			if next > 0 && next <= len(order) && (ev.Node == order[next-1] || u.Tags[order[next-1]] == 1 && ev.Node == "write") {
				release()
			}
		case graph.StepValues:
			s, _ := graph.StateOf[Desk](ev)
			lines = append(lines, fmt.Sprintf("values step=%d %s", ev.Step, showDesk(s)))
		case graph.CheckpointSaved:
			lines = append(lines, fmt.Sprintf("checkpoint seq=%d", ev.Seq))
		case graph.RunInterrupted:
			in := ev.Payload.(graph.PendingInterrupt)
			lines = append(lines, fmt.Sprintf("interrupted in %s: %s", in.Node, in.Payload))
		case graph.RunFinished:
			if ev.Err != nil {
				lines = append(lines, "finished: failed")
			} else {
				lines = append(lines, fmt.Sprintf("finished %v", ev.Payload))
			}
		}
	}
	return strings.Join(lines, "\n")
}

func (e *desk) do(cmd string) string {
	ctx := context.Background()
	f := strings.Fields(cmd)
	arg := func(i int) string { return argAt(f, i) }
	modes := []graph.StreamMode{graph.StreamUpdates, graph.StreamValues, graph.StreamCheckpoints}
	switch f[0] {
	case "run":
		return showDeskResult(e.r.Run(ctx, arg(1), Desk{Desk: arg(1), Topics: f[2:]}))
	case "resume":
		opts, err := resumeOptions(f)
		if err != nil {
			return "bad json: " + err.Error()
		}
		return showDeskResult(e.r.Resume(ctx, arg(1), opts...))
	case "stream":
		topics, order, _ := strings.Cut(strings.Join(f[2:], " "), "/")
		return e.showStream(strings.Fields(order), e.r.Stream(ctx, arg(1), Desk{Desk: arg(1), Topics: strings.Fields(topics)}, modes...))
	case "resume-stream":
		opts, err := resumeOptions(f)
		if err != nil {
			return "bad json: " + err.Error()
		}
		var sopts []graph.StreamOption
		for _, o := range opts {
			sopts = append(sopts, o)
		}
		for _, m := range modes {
			sopts = append(sopts, m)
		}
		return e.showStream(nil, e.r.ResumeStream(ctx, arg(1), sopts...))
	case "fail", "fix":
		return e.failFix(f)
	case "count":
		return e.show("index", "write", "edit", "legal/read", "legal/ask", "publish", "print")
	case "history":
		return showDeskHistory(e.r.History(ctx, arg(1), 0))
	case "child":
		sub, err := graph.SubgraphAt[Desk](ctx, e.r, arg(1), f[2:]...)
		if err != nil {
			return "error: " + err.Error()
		}
		return sub.RunID + "\n" + showDeskHistory(sub.History(ctx, 0))
	}
	return "unknown command " + f[0]
}
