package nodes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
)

// growthState is a run of a task-mode plan of n tasks (one phase each),
// approved and about to start phase 1.
func growthState(tb testing.TB, n int) state.ExecutionState {
	tb.Helper()
	var md strings.Builder
	md.WriteString("# Growth\n\nA plan of many small tasks.\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&md, "### Task %d: change %d\n\nEdit file%d.go so that step %d of the feature works; add its test.\n\n", i, i, i, i)
	}
	plan, err := state.ParsePlan("plan.md", md.String())
	if err != nil {
		tb.Fatal(err)
	}
	s, err := state.NewRun(state.RunInfo{ID: "r-growth", Goal: "growth", CreatedAt: time.Unix(1_700_000_000, 0)},
		state.RunConfig{Agents: state.Agents{Architect: state.AgentConfig{Driver: "script"}, Developer: state.AgentConfig{Driver: "script"},
			Reviewer: state.AgentConfig{Driver: "script"}, Evaluator: state.AgentConfig{Driver: "script"}}})
	if err != nil {
		tb.Fatal(err)
	}
	return s.WithPlan(plan).WithApproval(state.Approval{Decision: state.DecisionApproved})
}

// growthGraph changes the state as the workflow does, without agents or
// git: each phase is started (a step), reviewed and committed (a step),
// and left for the next (a step), so that every step changes one phase
// state and a few counters.
func growthGraph(tb testing.TB, opts ...graph.Option) *graph.Runner[state.ExecutionState] {
	tb.Helper()
	hash := func(i, k int) string { return fmt.Sprintf("%040x", i*7919+k) }
	g := graph.New[state.ExecutionState]()
	g.AddNode("phase", func(_ context.Context, s state.ExecutionState) (state.ExecutionState, error) {
		i := 0
		if ps := s.Progress.Phases[s.Progress.CurrentPhase()]; ps.Status == state.PhaseCompleted {
			i = ps.Index + 1 // the next phase, as next_task prepares it
		}
		ps, err := s.PhaseState(i)
		if err != nil {
			return s, err
		}
		ps.Status, ps.Attempt, ps.PreCommit = state.PhaseRunning, 1, hash(i, 0)
		ps.StartedAt = time.Unix(1_700_000_000+int64(i), 0)
		ps.Lanes = []state.LaneProgress{{Tasks: s.Plan.Phases[i].TaskIDs, Status: state.LaneDone, Attempt: 1,
			SessionID: fmt.Sprintf("session-%d", i), Base: ps.PreCommit, Usage: state.Usage{InputTokens: 1200, OutputTokens: 300}}}
		s = s.WithUsage("developer", state.Usage{InputTokens: 1200, OutputTokens: 300})
		return s.WithPhaseState(ps)
	})
	g.AddNode("review", func(_ context.Context, s state.ExecutionState) (state.ExecutionState, error) {
		i := s.Progress.CurrentPhase()
		ps, err := s.PhaseState(i)
		if err != nil {
			return s, err
		}
		ps.Status, ps.PostCommit = state.PhaseCompleted, hash(i, 1)
		ps.CompletedAt = time.Unix(1_700_000_100+int64(i), 0)
		ps.SummaryPath = fmt.Sprintf("docs/gaffer/2023-11-14-growth/phase-%d/summary.md", i+1)
		ps.Review = &state.ReviewResult{Approved: true, Comments: "The change does what the task asks and its test covers it.",
			Items: []state.ReviewItem{{Text: "test covers the new branch", Verdict: state.VerdictImplement}}}
		for j := range ps.Tasks {
			ps.Tasks[j].Status = state.PhaseCompleted
		}
		ps = ps.WithIteration(1)
		s = s.WithUsage("reviewer", state.Usage{InputTokens: 800, OutputTokens: 100})
		return s.WithPhaseState(ps)
	})
	g.AddNode("next", func(_ context.Context, s state.ExecutionState) (state.ExecutionState, error) {
		return s, nil // the next phase starts in "phase"
	})
	g.AddEdge(graph.START, "phase")
	g.AddEdge("phase", "review")
	g.AddConditionalEdge("review", func(_ context.Context, s state.ExecutionState) ([]string, error) {
		if s.LastPhase() {
			return []string{graph.END}, nil
		}
		return []string{"next"}, nil
	}, "next", graph.END)
	g.AddEdge("next", "phase")
	r, err := g.Compile(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// storeBytes runs the growth workload of a plan of n phases on a new
// Badger store, stopping after limit steps (0: at the end), and returns
// the bytes on disk once the store is closed and the steps taken.
func storeBytes(tb testing.TB, n, limit int, codec graph.Codec[state.ExecutionState]) (int64, int) {
	tb.Helper()
	dir := tb.TempDir()
	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	opts := []graph.Option{graph.WithStore(store), graph.WithDurability(graph.Async), graph.WithCodec(codec),
		graph.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) })}
	if limit > 0 {
		opts = append(opts, graph.WithStepLimit(limit))
	} else {
		opts = append(opts, graph.WithStepLimit(4*n))
	}
	r := growthGraph(tb, opts...)
	ctx := context.Background()
	if _, err := r.Run(ctx, "r-growth", growthState(tb, n)); err != nil && !(limit > 0 && errors.Is(err, graph.ErrStepLimit)) {
		tb.Fatal(err)
	}
	snap, err := r.State(ctx, "r-growth")
	if err != nil {
		tb.Fatal(err)
	}
	if err := store.Close(); err != nil {
		tb.Fatal(err)
	}
	var size int64
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		size += info.Size()
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return size, int(snap.Seq)
}

// growthBytesPerStep is what a step of the growth workload adds to the
// store, for a plan of n phases: the bytes on disk after the whole run
// less those after its first 3 steps (the plan and the store's own files),
// divided by the steps between.
func growthBytesPerStep(tb testing.TB, n int, codec graph.Codec[state.ExecutionState]) float64 {
	tb.Helper()
	base, baseSteps := storeBytes(tb, n, 3, codec)
	full, steps := storeBytes(tb, n, 0, codec)
	if want := 3*n - 1 + 1; steps != want {
		tb.Fatalf("%d phases: %d checkpoints, want %d", n, steps, want)
	}
	return float64(full-base) / float64(steps-baseSteps)
}

// BenchmarkPlanGrowth reports the bytes a step of a plan's run adds to a
// Badger store, for plans of 10, 100 and 600 phases, with the workflow's
// codec (phase states in chunks) and, for comparison, graph.JSONCodec
// (the whole phase list in one value, as before). It writes the same runs
// whatever b.N is; only bytes/step is meaningful.
func BenchmarkPlanGrowth(b *testing.B) {
	for _, codec := range []struct {
		name string
		new  func() graph.Codec[state.ExecutionState]
	}{
		{"chunked", func() graph.Codec[state.ExecutionState] { return NewCodec() }},
		{"whole", func() graph.Codec[state.ExecutionState] { return graph.NewJSONCodec[state.ExecutionState]() }},
	} {
		for _, n := range []int{10, 100, 600} {
			b.Run(fmt.Sprintf("codec=%s/phases=%d", codec.name, n), func(b *testing.B) {
				b.ReportMetric(growthBytesPerStep(b, n, codec.new()), "bytes/step")
			})
		}
	}
}

// TestPlanGrowthIsFlat holds a step's cost to what changed: a step of a
// 600-phase plan adds at most 3.5 times what a step of a 10-phase plan
// adds to the store. With the whole phase list in one value
// (graph.JSONCodec, as before) it was over 200×. A step rewrites the
// chunk of the phase it changed: the 10 phases of the small plan, 32
// (PhaseChunk) of the large one. Measured: 2.15× (269 and 578 bytes)
// while every step also rewrote the run's cursor in "progress"; 3.0×
// (211 and 631) since the cursor is the phases' lanes, which the large
// plan's chunk holds 32 of.
func TestPlanGrowthIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,800 checkpoints")
	}
	small := growthBytesPerStep(t, 10, NewCodec())
	large := growthBytesPerStep(t, 600, NewCodec())
	t.Logf("bytes/step: %.0f at 10 phases, %.0f at 600 phases (ratio %.2f)", small, large, large/small)
	if large > 3.5*small {
		t.Fatalf("a step of a 600-phase plan adds %.0f bytes, over 3.5× the %.0f of a 10-phase plan", large, small)
	}
}

// outboxCodec encodes a state with notifications on and a full outbox
// (state.OutboxKeep notices) and, with every, a new notice in each
// state it encodes: what the outbox costs a checkpoint when it does not
// change (the usual step) and when every step adds a notice (far more
// than a run raises).
type outboxCodec struct {
	*Codec
	every bool
	n     int
}

func (c *outboxCodec) Encode(s state.ExecutionState) (map[string][]byte, error) {
	s.Config.Notify = &state.NotifyConfig{URL: "https://inbox.example", Targets: []state.NotifyTarget{
		{Kind: "webhook", URL: "https://example.com/hook", SecretEnv: "GAFFER_HOOK_SECRET"}, {Kind: "ntfy", URL: "https://ntfy.sh/topic"}}}
	k := state.OutboxKeep
	if c.every {
		c.n++
		k += c.n
	}
	for i := range k {
		s = s.WithNotice(state.NoticeAwaitingApproval, time.Unix(1_700_000_000+int64(i), 0).UTC(),
			"gaffer: run r-growth is waiting for approval", "growth\nplan revision 0: 10 phase(s); approve or reject it: gaffer approve r-growth")
	}
	return c.Codec.Encode(s)
}

// BenchmarkOutboxGrowth reports the bytes a step adds to a Badger store
// for a 10-phase plan: without notifications, with a full outbox that
// the step does not change, and with a notice added at every step.
func BenchmarkOutboxGrowth(b *testing.B) {
	for _, c := range []struct {
		name  string
		codec func() graph.Codec[state.ExecutionState]
	}{
		{"none", func() graph.Codec[state.ExecutionState] { return NewCodec() }},
		{"full-unchanged", func() graph.Codec[state.ExecutionState] { return &outboxCodec{Codec: NewCodec()} }},
		{"notice-every-step", func() graph.Codec[state.ExecutionState] { return &outboxCodec{Codec: NewCodec(), every: true} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportMetric(growthBytesPerStep(b, 10, c.codec()), "bytes/step")
		})
	}
}
