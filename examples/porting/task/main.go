package main

import (
	"context"
	"fmt"
	"log"

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
	r := graph.Entrypoint("order", order, graph.Partial()).MustCompile(graph.WithMemoryStore())
	yes := func(*graph.PendingInterrupt) (any, error) { return true, nil }
	res, err := r.RunAnswering(context.Background(), "thread-1", Order{Amount: 42}, yes)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.State.Result, "charges:", charges)
}
