package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// TestStories runs the stories in testdata/stories/*.txt, in the format
// of TestScripts, against the newsroom graph, which uses each feature
// LangGraph users look for:
//
//	START ─► assign ═send═► write (one branch per topic) ─► edit
//	edit ─goto─► legal (a subgraph that asks for clearance) ─► publish ─► END
//	     └goto─► publish (prints with a durable Task) ─► END
//
// Commands:
//
//	run <id> <topic>...        start a run
//	resume <id> [json]         resume it, answering an interrupt with json
//	stream <id> <topic>...     start a run as a stream of updates; stop reading after the first
//	fail <what> / fix <what>   make "write:<topic>", "print" or "publish" fail / stop failing
//	count                      how many times each node (and the print task) ran
//	history <id>               the run's checkpoints, newest first
//	children <id>              its subgraph runs, with their latest state
func TestStories(t *testing.T) {
	runScripts(t, "testdata/stories/*.txt", func(t *testing.T, store checkpoint.Store) scripted { return newNewsroom(t, store) })
}

type news struct {
	Topics   []string
	Topic    string // a write branch's input
	Articles []string
	Legal    string
	Printed  string
}

// clearance is the legal subgraph's state: another type than the parent's.
type clearance struct {
	Articles []string
	Verdict  string
}

type newsroom struct {
	t   *testing.T
	r   *graph.Runner[news]
	sub *graph.Runner[clearance]
	nodeTally
}

func newNewsroom(t *testing.T, store checkpoint.Store) *newsroom {
	e := &newsroom{t: t, nodeTally: newNodeTally()}
	assign := func(_ context.Context, s news) (news, error) { e.ran("assign"); return s, nil }
	toWriters := func(_ context.Context, s news) (graph.Routes[news], error) {
		var r graph.Routes[news]
		for _, topic := range s.Topics {
			r.Sends = append(r.Sends, graph.Send[news]{Node: "write", Input: news{Topic: topic}})
		}
		return r, nil
	}
	write := func(_ context.Context, s news) (news, error) {
		e.ran("write")
		if e.fails("write:" + s.Topic) {
			return s, fmt.Errorf("the %s writer is out", s.Topic)
		}
		return news{Articles: []string{s.Topic + " story"}}, nil
	}
	merge := func(_ context.Context, base news, branches []news) (news, error) {
		out := base
		out.Articles = slices.Clone(base.Articles)
		for _, b := range branches {
			out.Articles = append(out.Articles, b.Articles...)
		}
		return out, nil
	}
	edit := func(_ context.Context, s news) (graph.Command[news], error) {
		e.ran("edit")
		for _, a := range s.Articles {
			if strings.Contains(a, "scandal") {
				return graph.Command[news]{Update: s, Goto: []string{"legal"}}, nil
			}
		}
		return graph.Command[news]{Update: s, Goto: []string{"publish"}}, nil
	}
	publish := func(ctx context.Context, s news) (news, error) {
		e.ran("publish")
		printed, err := graph.Task(ctx, "print", func(context.Context) (string, error) {
			e.ran("print")
			if e.fails("print") {
				return "", errors.New("the press is jammed")
			}
			return fmt.Sprintf("printed %d articles", len(s.Articles)), nil
		})
		if err != nil {
			return s, err
		}
		if e.fails("publish") {
			return s, errors.New("the trucks are late")
		}
		s.Printed = printed
		return s, nil
	}
	legal := graph.New[clearance]().
		AddNode("read", func(_ context.Context, c clearance) (clearance, error) { e.ran("legal/read"); return c, nil }).
		AddNode("ask", func(ctx context.Context, c clearance) (clearance, error) {
			e.ran("legal/ask")
			raw, err := graph.Interrupt(ctx, "clear "+strings.Join(c.Articles, ", ")+"?")
			if err != nil {
				return c, err
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return c, err
			}
			c.Verdict = v
			return c, nil
		}).
		AddEdge(graph.START, "read").AddEdge("read", "ask").AddEdge("ask", graph.END)
	legalR := mustCompile(t, legal)
	g := graph.New[news]().
		AddNode("assign", assign).
		AddNode("write", write).
		AddCommandNode("edit", edit, []string{"legal", "publish"}).
		AddNode("publish", publish)
	graph.AddSubgraph(g, "legal", legalR,
		func(s news) clearance { return clearance{Articles: s.Articles} },
		func(s news, c clearance) news { s.Legal = c.Verdict; return s })
	g.AddEdge(graph.START, "assign").
		AddSendEdge("assign", toWriters, "write").
		AddEdge("write", "edit").
		AddEdge("legal", "publish").
		AddEdge("publish", graph.END)
	e.r = mustCompile(t, g, graph.WithStore(store), graph.WithMerge(merge), graph.WithClock(fixedClock()))
	var err error
	if e.sub, err = graph.Subgraph[clearance](e.r, "legal"); err != nil {
		t.Fatal(err)
	}
	return e
}

func showNews(s news) string {
	out := fmt.Sprintf("articles=%q", s.Articles)
	if s.Legal != "" {
		out += " legal=" + s.Legal
	}
	if s.Printed != "" {
		out += " " + s.Printed
	}
	return out
}

func showNewsResult(res graph.Result[news], err error) string { return showRun(res, err, showNews) }

func (e *newsroom) do(cmd string) string {
	ctx := context.Background()
	f := strings.Fields(cmd)
	arg := func(i int) string { return argAt(f, i) }
	switch f[0] {
	case "run":
		return showNewsResult(e.r.Run(ctx, arg(1), news{Topics: f[2:]}))
	case "resume":
		opts, err := resumeOptions(f)
		if err != nil {
			return "bad json: " + err.Error()
		}
		return showNewsResult(e.r.Resume(ctx, arg(1), opts...))
	case "stream":
		var lines []string
		for ev, err := range e.r.Stream(ctx, arg(1), news{Topics: f[2:]}, graph.StreamUpdates) {
			if err != nil {
				return "error: " + err.Error()
			}
			if ev.Kind == graph.NodeUpdate {
				lines = append(lines, fmt.Sprintf("update %s %s (stop reading)", ev.Node, showNews(ev.Payload.(news))))
				break
			}
		}
		return strings.Join(lines, "\n")
	case "fail", "fix":
		return e.failFix(f)
	case "count":
		return e.show("assign", "write", "edit", "legal/read", "legal/ask", "publish", "print")
	case "history":
		hist, err := e.r.History(ctx, arg(1), 0)
		return showSteps(hist, err, showNews)
	case "children":
		kids, err := e.r.Children(ctx, arg(1))
		if err != nil {
			return "error: " + err.Error()
		}
		var lines []string
		for _, k := range kids {
			snap, err := e.sub.State(ctx, k.RunID)
			if err != nil {
				return "error: " + err.Error()
			}
			line := fmt.Sprintf("%s %s step=%d articles=%q verdict=%q", k.RunID, k.Status, snap.Step, snap.State.Articles, snap.State.Verdict)
			if in := snap.Interrupt; in != nil {
				line += fmt.Sprintf(" waiting=%s %s", in.Node, in.Payload)
			}
			lines = append(lines, line)
		}
		if len(lines) == 0 {
			return "none"
		}
		return strings.Join(lines, "\n")
	}
	return "unknown command " + f[0]
}
