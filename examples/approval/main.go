package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
)

// State is the run's state. Nodes return changed copies.
type State struct {
	Plan     []string
	Approved bool
	Done     []string
}

func main() {
	dir := flag.String("dir", "approval-store", "Badger store directory")
	runID := flag.String("run", "demo", "run id")
	approve := flag.Bool("approve", false, "approve the pending plan")
	reject := flag.Bool("reject", false, "reject the pending plan")
	pace := flag.Duration("pace", 700*time.Millisecond, "time each work item takes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *dir, *runID, *approve, *reject, *pace); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

func buildGraph(pace time.Duration) *graph.Graph[State] {
	draft := func(_ context.Context, s State) (State, error) {
		s.Plan = []string{"write tests", "implement", "refactor", "document"}
		return s, nil
	}
	ask := func(ctx context.Context, s State) (State, error) {
		answer, err := graph.Interrupt(ctx, s.Plan)
		if err != nil {
			return s, err
		}
		return s, json.Unmarshal(answer, &s.Approved)
	}
	work := func(ctx context.Context, s State) (State, error) {
		item := s.Plan[len(s.Done)]
		graph.Emit(ctx, "working", item)
		select {
		case <-time.After(pace):
		case <-ctx.Done():
			return s, ctx.Err()
		}
		s.Done = append(slices.Clone(s.Done), item)
		return s, nil
	}
	afterApproval := func(_ context.Context, s State) ([]string, error) {
		if s.Approved {
			return []string{"work"}, nil
		}
		return []string{graph.END}, nil
	}
	moreWork := func(_ context.Context, s State) ([]string, error) {
		if len(s.Done) < len(s.Plan) {
			return []string{"work"}, nil
		}
		return []string{graph.END}, nil
	}
	return graph.New[State]().
		AddNode("draft", draft).
		AddNode("approval", ask).
		AddNode("work", work).
		AddEdge(graph.START, "draft").
		AddEdge("draft", "approval").
		AddConditionalEdge("approval", afterApproval, "work", graph.END).
		AddConditionalEdge("work", moreWork, "work", graph.END)
}

func run(ctx context.Context, out io.Writer, dir, runID string, approve, reject bool, pace time.Duration) error {
	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := buildGraph(pace).Compile(graph.WithStore(store), graph.WithDurability(graph.Sync))
	if err != nil {
		return err
	}
	r.Subscribe(func(e graph.Event) {
		switch e.Kind {
		case graph.NodeStarted:
			fmt.Fprintf(out, "step %d: %s\n", e.Step, e.Node)
		case graph.Custom:
			fmt.Fprintf(out, "  %s %v\n", e.Name, e.Payload)
		case graph.CheckpointSaved:
			fmt.Fprintf(out, "  checkpoint %d saved\n", e.Seq)
		}
	})

	var res graph.Result[State]
	snap, err := r.State(ctx, runID)
	switch {
	case errors.Is(err, graph.ErrRunNotFound):
		fmt.Fprintf(out, "starting run %s in %s\n", runID, dir)
		res, err = r.Run(ctx, runID, State{})
	case err != nil:
		return err
	case snap.Status == graph.StatusDone:
		fmt.Fprintf(out, "run %s is done: %v\n", runID, snap.State.Done)
		return nil
	case snap.Interrupt != nil && (approve || reject):
		fmt.Fprintf(out, "answering run %s: approved=%v\n", runID, approve)
		res, err = r.Resume(ctx, runID, graph.WithResume(approve))
	case snap.Interrupt != nil:
		fmt.Fprintf(out, "run %s waits for approval of %s; run again with -approve or -reject\n", runID, snap.Interrupt.Payload)
		return nil
	default:
		fmt.Fprintf(out, "resuming run %s at checkpoint %d, next %v\n", runID, snap.Seq, snap.Next)
		res, err = r.Resume(ctx, runID)
	}
	if err != nil {
		return err
	}
	if res.Status == graph.Interrupted {
		fmt.Fprintf(out, "waiting for approval of %s; run again with -approve or -reject\n", res.Interrupt.Payload)
		return nil
	}
	fmt.Fprintf(out, "done: approved=%v, did %v\n", res.State.Approved, res.State.Done)
	return nil
}
