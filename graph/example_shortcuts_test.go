package graph_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
)

// Post is the state of the shortcut examples.
type Post struct {
	Draft string
	Log   []string `graph:"append"`
}

func note(text string) graph.NodeFunc[Post] {
	return func(_ context.Context, s Post) (Post, error) {
		return Post{Log: []string{text + " " + s.Draft}}, nil
	}
}

// ExampleGraph_MustCompile builds a static graph with AddPath (LangGraph's
// addSequence) and MustCompile (compile() that throws).
func ExampleGraph_MustCompile() {
	r := graph.New[Post]().
		AddNode("check", note("checked"), graph.Partial()).
		AddNode("publish", note("published"), graph.Partial()).
		AddPath(graph.START, "check", "publish", graph.END).
		MustCompile()
	res, err := r.Run(context.Background(), "p", Post{Draft: "v1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State.Log)
	// Output: [checked v1 published v1]
}

// ExampleEntrypoint is LangGraph's functional API: an entrypoint whose
// durable task runs once, though the node runs again when the run resumes;
// WithMemoryStore is the MemorySaver, and RunAnswering answers the interrupt.
func ExampleEntrypoint() {
	charges := 0
	order := func(ctx context.Context, s Post) (Post, error) {
		receipt, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			charges++
			return "receipt for " + s.Draft, nil
		})
		if err != nil {
			return s, err
		}
		ok, err := graph.Ask[bool](ctx, "ship "+receipt+"?")
		return Post{Log: []string{fmt.Sprint("shipped: ", ok)}}, err
	}
	r := graph.Entrypoint("order", order, graph.Partial()).MustCompile(graph.WithMemoryStore())
	res, err := r.RunAnswering(context.Background(), "t", Post{Draft: "42"}, func(i *graph.PendingInterrupt) (any, error) {
		fmt.Println("asked:", string(i.Payload))
		return true, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State.Log, "charges:", charges)
	// Output:
	// asked: "ship receipt for 42?"
	// [shipped: true] charges: 1
}

// ExampleRunner_Updates streams a parallel step's updates typed, each as
// its branch finishes (pending: before the step's checkpoint).
func ExampleRunner_Updates() {
	worker := func(name string, d time.Duration) graph.NodeFunc[Post] {
		return func(context.Context, Post) (Post, error) {
			time.Sleep(d)
			return Post{Log: []string{name}}, nil
		}
	}
	r := graph.New[Post]().
		AddNode("slow", worker("slow", 200*time.Millisecond), graph.Partial()).
		AddNode("fast", worker("fast", 0), graph.Partial()).
		AddPath(graph.START, "slow", graph.END).AddPath(graph.START, "fast", graph.END).
		MustCompile()
	for u, err := range r.Updates(context.Background(), "s", Post{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u.Node, u.State.Log, u.Pending)
	}
	// Unordered output:
	// fast [fast] true
	// slow [slow] true
}

// ExampleEntrypointFunc is LangGraph's functional API with the entrypoint's
// input and return value: no state type, the run starts from Call{In: 42}
// and its result is Out. AnswerAll answers the interrupt.
func ExampleEntrypointFunc() {
	order := func(ctx context.Context, amount int) (string, error) {
		receipt, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			return fmt.Sprint("receipt for ", amount), nil
		})
		if err != nil {
			return "", err
		}
		ship, err := graph.Ask[bool](ctx, "ship "+receipt+"?")
		if !ship {
			return "kept", err
		}
		return "shipped with " + receipt, err
	}
	r := graph.EntrypointFunc("order", order).MustCompile(graph.WithMemoryStore())
	res, err := r.RunAnswering(context.Background(), "t", graph.Call[int, string]{In: 42}, graph.AnswerAll(true))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State.Out)
	// Output: shipped with receipt for 42
}
