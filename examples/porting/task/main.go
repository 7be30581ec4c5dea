package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gaffer-dev/gaffer/graph"
)

func main() {
	charges := 0
	order := func(ctx context.Context, amount int) (string, error) {
		receipt, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			charges++
			return fmt.Sprint("receipt for ", amount), nil
		})
		if err != nil {
			return "", err
		}
		if ship, err := graph.Ask[bool](ctx, "ship "+receipt+"?"); err != nil || !ship {
			return "kept", err
		}
		return "shipped with " + receipt, nil
	}
	r := graph.EntrypointFunc("order", order).MustCompile(graph.WithMemoryStore())
	res, err := r.RunAnswering(context.Background(), "thread-1", graph.Call[int, string]{In: 42}, graph.AnswerAll(true))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State.Out, "charges:", charges)
}
