package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
)

// --- Reducers: rounds of a fan-out of a whole-state node and 16 Partial sends ---

const (
	reduceKillRun    = "reducekill"
	reduceKillRounds = 10
)

type reduceKillState struct {
	Round int `graph:"sum"`
	Item  int
	Done  []string `graph:"append"`
	Count int      `graph:"sum"`
}

// reduceKillRunner: each round, split (Partial) adds one to Round, then a
// named whole-state node, tally, and 16 Partial sends of work run at once,
// combined by the reducers alone.
func reduceKillRunner(out *syncWriter, opts ...graph.Option) (*graph.Runner[reduceKillState], error) {
	route := func(_ context.Context, s reduceKillState) (graph.Routes[reduceKillState], error) {
		if s.Round > reduceKillRounds {
			return graph.Goto[reduceKillState](graph.END), nil
		}
		r := graph.SendEach("work", make([]int, sendKillWays), func(int) reduceKillState { return reduceKillState{Round: s.Round} })
		for i := range r.Sends {
			r.Sends[i].Input.Item = i
		}
		r.Nodes = []string{"tally"}
		return r, nil
	}
	work := func(_ context.Context, s reduceKillState) (reduceKillState, error) {
		if out != nil {
			out.println(fmt.Sprintf("start %d/%d", s.Round, s.Item))
		}
		time.Sleep(time.Duration(1+s.Item%4) * time.Millisecond)
		return reduceKillState{Done: []string{fmt.Sprintf("%d/%d", s.Round, s.Item)}, Count: s.Item}, nil
	}
	tally := func(_ context.Context, s reduceKillState) (reduceKillState, error) {
		s.Done = append(slices.Clone(s.Done), fmt.Sprintf("tally %d", s.Round))
		s.Count += 100
		return s, nil
	}
	g := graph.New[reduceKillState]().
		AddNode("split", func(context.Context, reduceKillState) (reduceKillState, error) {
			return reduceKillState{Round: 1}, nil
		}, graph.Partial()).
		AddNode("tally", tally).
		AddNode("work", work, graph.Partial()).
		AddEdge(graph.START, "split").
		AddRoute("split", route, "tally", "work", graph.END).
		AddEdge("tally", "split").AddEdge("work", "split")
	return g.Compile(opts...)
}

var reduceKill = killScenario{
	run: func(ctx context.Context, store checkpoint.Store, out *syncWriter) error {
		r, err := reduceKillRunner(out, graph.WithStore(store))
		if err != nil {
			return err
		}
		return resumeOrRun(ctx, r, reduceKillRun, reduceKillState{}, out)
	},
	saved: func(t *testing.T, store checkpoint.Store) []string {
		var keys []string
		for _, id := range pendingTaskIDs(t, store, reduceKillRun) {
			f := strings.Split(id, "/") // run/step/node/branch; branch 0 is tally
			if len(f) != 4 || f[2] != "work" {
				continue
			}
			step, _ := strconv.Atoi(f[1])
			branch, _ := strconv.Atoi(f[3])
			keys = append(keys, fmt.Sprintf("%d/%d", step/2, branch-1))
		}
		return keys
	},
	check: func(t *testing.T, store checkpoint.Store) {
		snap, want := killedAndClean(t, store, reduceKillRun, reduceKillState{}, func(opts ...graph.Option) (*graph.Runner[reduceKillState], error) {
			return reduceKillRunner(nil, opts...)
		})
		if snap.Status != graph.StatusDone || !slices.Equal(snap.State.Done, want.State.Done) || snap.State.Count != want.State.Count ||
			len(want.State.Done) != reduceKillRounds*(sendKillWays+1) {
			t.Fatalf("killed run ended %s with %v (count %d); an uninterrupted one with %v (count %d)",
				snap.Status, snap.State.Done, snap.State.Count, want.State.Done, want.State.Count)
		}
	},
}

// TestKillReducers kills a process running rounds of a fan-out combined by
// reducers (a whole-state node beside 16 Partial sends) on Badger at random
// moments: a branch whose pending write was saved never starts again, and
// the final state, each field reduced, is an uninterrupted run's.
func TestKillReducers(t *testing.T) { runKills(t, "reduce", 12) }
