package main

import (
	"context"
	"encoding/json"
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
		raw, err := graph.Interrupt(ctx, "ship "+receipt+"?")
		if err != nil {
			return s, err
		}
		var ship bool
		if err := json.Unmarshal(raw, &ship); err != nil {
			return s, err
		}
		s.Result = "kept"
		if ship {
			s.Result = "shipped with " + receipt
		}
		return s, nil
	}
	r, err := graph.New[Order]().
		AddNode("order", order).
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
