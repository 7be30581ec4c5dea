package graph_test

// Examples of what a LangGraph user reaches for first: reducers, partial
// updates, one router, typed interrupts, same-type subgraphs, typed cache
// keys and typed stream payloads. docs/graph.md ("Coming from LangGraph")
// quotes them; TestGraphDocIsCurrent checks that it quotes them as they are.

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// Jokes is the state of the map-reduce examples: Jokes collects every
// branch's jokes (LangGraph's Annotation with a concat reducer).
type Jokes struct {
	Subjects []string
	Subject  string
	Jokes    []string `graph:"append"`
}

// Example_reducers is LangGraph's map-reduce with Send, with a reducer on
// Jokes instead of a merge function.
func Example_reducers() {
	joke := func(_ context.Context, s Jokes) (Jokes, error) {
		return Jokes{Jokes: []string{"a joke about " + s.Subject}}, nil
	}
	toJokes := func(_ context.Context, s Jokes) (graph.Routes[Jokes], error) {
		return graph.SendEach("joke", s.Subjects, func(sub string) Jokes { return Jokes{Subject: sub} }), nil
	}
	r, err := graph.New[Jokes]().
		AddNode("joke", joke, graph.Partial()).
		AddRoute(graph.START, toJokes, "joke").
		AddEdge("joke", graph.END).
		Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := r.Run(context.Background(), "jokes", Jokes{Subjects: []string{"cats", "dogs"}})
	fmt.Println(res.State.Jokes, err)
	// Output: [a joke about cats a joke about dogs] <nil>
}

// Votes has a field with a custom reducer: the counts of every branch are
// added up.
type Votes struct {
	Voter  string
	Counts map[string]int
}

func addCounts(cur, w map[string]int) map[string]int {
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]int{}
	}
	for k, v := range w {
		out[k] += v
	}
	return out
}

func ExampleGraph_Reduce() {
	vote := func(_ context.Context, s Votes) (Votes, error) {
		return Votes{Counts: map[string]int{s.Voter[:1]: 1}}, nil
	}
	g := graph.New[Votes]().
		AddNode("vote", vote, graph.Partial()).
		AddRoute(graph.START, func(_ context.Context, s Votes) (graph.Routes[Votes], error) {
			return graph.SendEach("vote", []string{"ann", "bob", "al"}, func(v string) Votes { return Votes{Voter: v} }), nil
		}, "vote").
		AddEdge("vote", graph.END).
		Reduce(graph.Reducer(func(s *Votes) *map[string]int { return &s.Counts }, addCounts))
	r, _ := g.Compile()
	res, err := r.Run(context.Background(), "poll", Votes{})
	fmt.Println(res.State.Counts, err)
	// Output: map[a:2 b:1] <nil>
}

// Trace is the state of the partial-update example.
type Trace struct {
	Log   []string `graph:"append"`
	Steps int      `graph:"sum"`
	Owner string
}

func ExamplePartial() {
	step := func(_ context.Context, s Trace) (Trace, error) {
		return Trace{Log: []string{"step"}, Steps: 1}, nil // Owner is left alone
	}
	r, _ := graph.New[Trace]().
		AddNode("a", step, graph.Partial()).
		AddNode("b", step, graph.Partial()).
		AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END).
		Compile()
	res, _ := r.Run(context.Background(), "t", Trace{Owner: "ann"})
	fmt.Println(res.State.Log, res.State.Steps, res.State.Owner)
	// Output: [step step] 2 ann
}

// ExampleFunc is LangGraph's node (s) => update: a node that needs no
// context and cannot fail is a plain function of the state.
func ExampleFunc() {
	publish := func(s Trace) Trace { return Trace{Log: []string{"published by " + s.Owner}, Steps: 1} }
	r := graph.New[Trace]().
		AddNode("publish", graph.Func(publish), graph.Partial()).
		AddPath(graph.START, "publish", graph.END).
		MustCompile()
	res, _ := r.Run(context.Background(), "t", Trace{Owner: "ann"})
	fmt.Println(res.State.Log, res.State.Steps, res.State.Owner)
	// Output: [published by ann] 1 ann
}

func ExampleWithMergeBranches() {
	type st struct {
		Topic string
		Notes []string
	}
	note := func(_ context.Context, s st) (st, error) { return st{Notes: []string{"on " + s.Topic}}, nil }
	merge := func(_ context.Context, base st, branches []graph.Branch[st]) (st, error) {
		for _, b := range branches {
			fmt.Printf("%s#%d send=%d input=%q\n", b.Node, b.Index, b.Send, b.Input.Topic)
			base.Notes = append(base.Notes, b.Result.Notes...)
		}
		return base, nil
	}
	g := graph.New[st]().
		AddNode("summary", note).AddNode("detail", note).
		AddRoute(graph.START, func(_ context.Context, s st) (graph.Routes[st], error) {
			r := graph.SendEach("detail", []string{"a", "b"}, func(t string) st { return st{Topic: t} })
			r.Nodes = []string{"summary"}
			return r, nil
		}, "summary", "detail").
		AddEdge("summary", graph.END).AddEdge("detail", graph.END)
	r, _ := g.Compile(graph.WithMergeBranches(merge))
	res, _ := r.Run(context.Background(), "m", st{Topic: "all"})
	fmt.Println(res.State.Notes)
	// Output:
	// summary#0 send=-1 input="all"
	// detail#1 send=0 input="a"
	// detail#2 send=1 input="b"
	// [on all on a on b]
}

// Ticket is the state of the routing and interrupt examples.
type Ticket struct {
	Text     string
	Priority int
	Approved bool
	Log      []string `graph:"append"`
}

func ExampleGraph_AddRoute() {
	triage := func(_ context.Context, s Ticket) (graph.Routes[Ticket], error) {
		if s.Priority > 1 {
			return graph.Goto[Ticket]("page"), nil
		}
		return graph.Goto[Ticket]("queue"), nil
	}
	log := func(name string) graph.NodeFunc[Ticket] {
		return func(_ context.Context, s Ticket) (Ticket, error) { return Ticket{Log: []string{name}}, nil }
	}
	r, _ := graph.New[Ticket]().
		AddNode("page", log("page"), graph.Partial()).
		AddNode("queue", log("queue"), graph.Partial()).
		AddRoute(graph.START, triage, "page", "queue").
		AddEdge("page", graph.END).AddEdge("queue", graph.END).
		Compile()
	for _, p := range []int{1, 3} {
		res, _ := r.Run(context.Background(), fmt.Sprint("t", p), Ticket{Priority: p})
		fmt.Println(p, res.State.Log)
	}
	// Output:
	// 1 [queue]
	// 3 [page]
}

func ExampleAsk() {
	review := func(ctx context.Context, s Ticket) (Ticket, error) {
		ok, err := graph.Ask[bool](ctx, "ship "+s.Text+"?")
		if err != nil {
			return s, err
		}
		return Ticket{Approved: ok}, nil
	}
	r, _ := graph.New[Ticket]().
		AddNode("review", review, graph.Partial()).
		AddEdge(graph.START, "review").AddEdge("review", graph.END).
		Compile(graph.WithStore(checkpoint.NewMemory()))
	ctx := context.Background()
	res, _ := r.Run(ctx, "t", Ticket{Text: "v2"})
	fmt.Println(res.Status, string(res.Interrupt.Payload))
	res, err := r.Resume(ctx, "t", graph.WithResume(true))
	fmt.Println(res.Status, res.State.Approved, err)
	// Output:
	// interrupted "ship v2?"
	// done true <nil>
}

func ExampleGraph_AddSubgraph() {
	review, _ := graph.New[Ticket]().
		AddNode("check", func(_ context.Context, s Ticket) (Ticket, error) {
			return Ticket{Log: []string{"checked " + s.Text}}, nil
		}, graph.Partial()).
		AddEdge(graph.START, "check").AddEdge("check", graph.END).
		Compile()
	r, _ := graph.New[Ticket]().
		AddNode("open", func(_ context.Context, s Ticket) (Ticket, error) { return Ticket{Log: []string{"opened"}}, nil }, graph.Partial()).
		AddSubgraph("review", review).
		AddEdge(graph.START, "open").AddEdge("open", "review").AddEdge("review", graph.END).
		Compile(graph.WithStore(checkpoint.NewMemory()))
	ctx := context.Background()
	res, err := r.Run(ctx, "t", Ticket{Text: "v2"})
	fmt.Println(res.State.Log, err)
	sub, _ := graph.SubgraphAt[Ticket](ctx, r, "t", "review")
	snap, _ := sub.State(ctx)
	fmt.Println(sub.RunID, snap.State.Log, snap.Status)
	// Output:
	// [opened checked v2] <nil>
	// t|review:2:0 [opened checked v2] done
}

func ExampleSubgraphAt() {
	// Two levels: desk runs the subgraph review, which runs the subgraph legal.
	leaf := func(name string) graph.NodeFunc[Ticket] {
		return func(_ context.Context, s Ticket) (Ticket, error) { return Ticket{Log: []string{name}}, nil }
	}
	legal, _ := graph.New[Ticket]().
		AddNode("clear", leaf("cleared"), graph.Partial()).
		AddEdge(graph.START, "clear").AddEdge("clear", graph.END).Compile()
	review, _ := graph.New[Ticket]().
		AddSubgraph("legal", legal).
		AddEdge(graph.START, "legal").AddEdge("legal", graph.END).Compile()
	desk, _ := graph.New[Ticket]().
		AddSubgraph("review", review).
		AddEdge(graph.START, "review").AddEdge("review", graph.END).
		Compile(graph.WithStore(checkpoint.NewMemory()))
	ctx := context.Background()
	_, _ = desk.Run(ctx, "d", Ticket{})
	sub, err := graph.SubgraphAt[Ticket](ctx, desk, "d", "review", "legal")
	if err != nil {
		fmt.Println(err)
		return
	}
	hist, _ := sub.History(ctx, 0)
	fmt.Println(sub.RunID, len(hist), hist[0].State.Log)
	// Output: d|review:1:0|legal:1:0 2 [cleared]
}

func ExampleCacheKey() {
	type query struct {
		Q, Answer, User string
	}
	calls := 0
	search := func(_ context.Context, s query) (query, error) {
		calls++
		return query{Answer: strings.ToUpper(s.Q)}, nil
	}
	r, _ := graph.New[query]().
		AddNode("search", search, graph.Partial(), graph.CacheKey(func(s query) string { return s.Q }, time.Hour)).
		AddEdge(graph.START, "search").AddEdge("search", graph.END).
		Compile()
	for _, user := range []string{"ann", "bob"} {
		res, _ := r.Run(context.Background(), user, query{Q: "go", User: user})
		fmt.Println(res.State.User, res.State.Answer, calls)
	}
	// Output:
	// ann GO 1
	// bob GO 1
}

func ExampleStateOf() {
	r, _ := graph.New[Trace]().
		AddNode("a", func(_ context.Context, s Trace) (Trace, error) { return Trace{Log: []string{"a"}}, nil }, graph.Partial()).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).
		Compile()
	for ev, err := range r.Stream(context.Background(), "s", Trace{}, graph.StreamUpdates) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if s, ok := graph.StateOf[Trace](ev); ok {
			fmt.Println(ev.Node, s.Log)
		}
	}
	// Output: a [a]
}

func ExampleRunner_ResumeStream() {
	r, _ := graph.New[Ticket]().
		AddNode("review", func(ctx context.Context, s Ticket) (Ticket, error) {
			ok, err := graph.Ask[bool](ctx, "ship?")
			return Ticket{Approved: ok}, err
		}, graph.Partial()).
		AddEdge(graph.START, "review").AddEdge("review", graph.END).
		Compile(graph.WithStore(checkpoint.NewMemory()))
	ctx := context.Background()
	_, _ = r.Run(ctx, "t", Ticket{})
	for ev, err := range r.ResumeStream(ctx, "t", graph.WithResume(true), graph.StreamUpdates) {
		if s, ok := graph.StateOf[Ticket](ev); ok && err == nil {
			fmt.Println(ev.Node, s.Approved)
		}
	}
	// Output: review true
}
