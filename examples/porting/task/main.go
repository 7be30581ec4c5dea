package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

type Order struct {
	Amount int
	Result string
}

func main() {
	charges := 0
	order := func(ctx context.Context, s Order) (Order, error) {
		receipt, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			charges++
			return fmt.Sprint("receipt for ", s.Amount), nil
		})
		if err != nil {
			return s, err
		}
		ship, err := graph.Ask[bool](ctx, "ship "+receipt+"?")
		if !ship {
			return Order{Result: "kept"}, err
		}
		return Order{Result: "shipped with " + receipt}, err
	}
	r, err := graph.New[Order]().
		AddNode("order", order, graph.Partial()).
		AddEdge(graph.START, "order").AddEdge("order", graph.END).
		Compile(graph.WithStore(checkpoint.NewMemory()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.Run(ctx, "thread-1", Order{Amount: 42}); err != nil {
		log.Fatal(err)
	}
	res, err := r.Resume(ctx, "thread-1", graph.WithResume(true))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State.Result, "charges:", charges)
}
