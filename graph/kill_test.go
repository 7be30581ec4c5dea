package graph_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
)

// killScenarioEnv names the scenario the test binary runs as a kill
// helper (with crashHelperEnv naming the store directory): it runs or
// resumes the scenario's run, printing "ack" at each checkpoint and
// "start <key>" each time a side effect that must not repeat begins.
const killScenarioEnv = "GAFFER_GRAPH_KILL_SCENARIO"

// killScenario is a run killed with SIGKILL at random moments.
type killScenario struct {
	// run runs or resumes the scenario's run on store, writing to out.
	run func(ctx context.Context, store checkpoint.Store, out *syncWriter) error
	// saved returns the keys whose effect the store shows as saved: a
	// later process must not print "start <key>" for them.
	saved func(t *testing.T, store checkpoint.Store) []string
	// check checks the finished run.
	check func(t *testing.T, store checkpoint.Store)
}

var killScenarios = map[string]killScenario{
	"send":     sendKill,
	"task":     taskKill,
	"subgraph": subgraphKill,
	"reduce":   reduceKill,
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) println(a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintln(s.w, a...)
}

// killHelper is the helper process's body: it returns true when it ran.
func killHelper() bool {
	name := os.Getenv(killScenarioEnv)
	if name == "" {
		return false
	}
	dir := os.Getenv(crashHelperEnv)
	err := func() error {
		store, err := badger.Open(dir, badger.Options{})
		if err != nil {
			return err
		}
		defer store.Close()
		out := &syncWriter{w: os.Stdout}
		if err := killScenarios[name].run(context.Background(), store, out); err != nil {
			return err
		}
		out.println("done")
		return nil
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kill helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

// resumeOrRun resumes runID, or starts it when it does not exist yet.
func resumeOrRun[S any](ctx context.Context, r *graph.Runner[S], runID string, initial S, out *syncWriter) error {
	r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.CheckpointSaved {
			out.println("ack")
		}
	})
	_, err := r.Resume(ctx, runID)
	if errors.Is(err, graph.ErrRunNotFound) {
		_, err = r.Run(ctx, runID, initial)
	}
	if errors.Is(err, graph.ErrRunDone) {
		err = nil
	}
	return err
}

// runKills kills the scenario's helper kills times, each after a random
// number of output lines, checks after each kill that no saved effect
// starts again, then lets a last helper finish and checks the run.
func runKills(t *testing.T, name string, kills int) {
	if testing.Short() {
		t.Skip("starts helper processes")
	}
	sc := killScenarios[name]
	rng := rand.New(rand.NewPCG(crashSeed(t, 20261128), uint64(len(name))))
	dir := t.TempDir()
	start := func() (*exec.Cmd, *bufio.Scanner) {
		return startHelper(t, crashHelperEnv+"="+dir, killScenarioEnv+"="+name)
	}
	withStore := func(f func(store checkpoint.Store)) {
		store, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		f(store)
	}
	var saved []string
	checkLine := func(kill int, line string) {
		if key, ok := strings.CutPrefix(line, "start "); ok && slices.Contains(saved, key) {
			t.Errorf("after kill %d: %s started again, though its result was saved", kill, key)
		}
	}
	finished := false
	for kill := range kills {
		after := 1 + rng.IntN(40)
		cmd, lines := start()
		n := 0
		for n < after && lines.Scan() {
			checkLine(kill, lines.Text())
			if lines.Text() == "done" {
				finished = true
			}
			n++
		}
		time.Sleep(time.Duration(rng.IntN(6000)) * time.Microsecond) // land inside a step, too
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for lines.Scan() {
			checkLine(kill, lines.Text())
			finished = finished || lines.Text() == "done"
		}
		_ = cmd.Wait()
		withStore(func(store checkpoint.Store) { saved = sc.saved(t, store) })
		t.Logf("kill %2d after %2d lines: %d effects saved in the step under way", kill+1, after, len(saved))
		if finished {
			break
		}
	}
	cmd, lines := start()
	finishHelper(t, cmd, lines, func(line string) { checkLine(kills, line) })
	withStore(func(store checkpoint.Store) { sc.check(t, store) })
}

// crashSeed returns the seed of a kill test's random moments: def, unless
// GAFFER_CRASH_SEED replays another.
func crashSeed(t *testing.T, def uint64) uint64 {
	t.Helper()
	seed := def
	if s := os.Getenv("GAFFER_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set GAFFER_CRASH_SEED to replay)", seed)
	return seed
}

// startHelper starts the test binary as a helper process (see TestMain)
// with env added to its environment, and returns it with a scanner of its
// output.
func startHelper(t *testing.T, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout)
}

// finishHelper reads a helper's output to its end, handing each line to
// each (unless nil), and fails t unless the helper printed "done" last and
// exited cleanly.
func finishHelper(t *testing.T, cmd *exec.Cmd, lines *bufio.Scanner, each func(line string)) {
	t.Helper()
	var tail string
	for lines.Scan() {
		if each != nil {
			each(lines.Text())
		}
		tail = lines.Text()
	}
	if err := cmd.Wait(); err != nil || tail != "done" {
		t.Fatalf("final run: %v, last line %q", err, tail)
	}
}

// killedAndClean returns the latest snapshot of the killed run runID in
// store, and the result of an uninterrupted run from initial: each on a
// runner that compile makes, with the store and without one.
func killedAndClean[S any](t *testing.T, store checkpoint.Store, runID string, initial S, compile func(...graph.Option) (*graph.Runner[S], error)) (graph.Snapshot[S], graph.Result[S]) {
	t.Helper()
	r, err := compile(graph.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r.State(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	clean, err := compile()
	if err != nil {
		t.Fatal(err)
	}
	want, err := clean.Run(context.Background(), "clean", initial)
	if err != nil {
		t.Fatal(err)
	}
	return snap, want
}

// pendingTaskIDs returns the task ids of the pending writes of the step
// after runID's latest checkpoint.
func pendingTaskIDs(t *testing.T, store checkpoint.Store, runID string) []string {
	t.Helper()
	cp, err := store.Latest(context.Background(), runID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	seq := cp.Seq
	if s, ok := cp.Meta[graph.MetaWritesSeq]; ok {
		seq, _ = strconv.ParseUint(s, 10, 64)
	}
	ws, err := store.Writes(context.Background(), runID, seq)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.TaskID)
	}
	return ids
}

// --- Send: rounds of a 16-way fan-out ---

const (
	sendKillRun    = "sendkill"
	sendKillRounds = 12
	sendKillWays   = 16
)

type sendKillState struct {
	Round int
	Item  int
	Done  []string
}

func sendKillRunner(out *syncWriter, opts ...graph.Option) (*graph.Runner[sendKillState], error) {
	route := func(_ context.Context, s sendKillState) (graph.Routes[sendKillState], error) {
		if s.Round >= sendKillRounds {
			return graph.Routes[sendKillState]{Nodes: []string{graph.END}}, nil
		}
		var r graph.Routes[sendKillState]
		for i := range sendKillWays {
			r.Sends = append(r.Sends, graph.Send[sendKillState]{Node: "work", Input: sendKillState{Round: s.Round, Item: i}})
		}
		return r, nil
	}
	work := func(_ context.Context, s sendKillState) (sendKillState, error) {
		if out != nil {
			out.println(fmt.Sprintf("start %d/%d", s.Round, s.Item))
		}
		time.Sleep(time.Duration(1+s.Item%4) * time.Millisecond)
		return sendKillState{Done: []string{fmt.Sprintf("%d/%d", s.Round, s.Item)}}, nil
	}
	merge := func(_ context.Context, base sendKillState, branches []sendKillState) (sendKillState, error) {
		out := sendKillState{Round: base.Round + 1, Done: slices.Clone(base.Done)}
		for _, b := range branches {
			out.Done = append(out.Done, b.Done...)
		}
		return out, nil
	}
	g := graph.New[sendKillState]().
		AddNode("split", func(_ context.Context, s sendKillState) (sendKillState, error) { return s, nil }).
		AddNode("work", work).
		AddEdge(graph.START, "split").
		AddSendEdge("split", route, "work", graph.END).
		AddEdge("work", "split")
	return g.Compile(append(opts, graph.WithMerge(merge))...)
}

var sendKill = killScenario{
	run: func(ctx context.Context, store checkpoint.Store, out *syncWriter) error {
		r, err := sendKillRunner(out, graph.WithStore(store))
		if err != nil {
			return err
		}
		return resumeOrRun(ctx, r, sendKillRun, sendKillState{}, out)
	},
	saved: func(t *testing.T, store checkpoint.Store) []string {
		var keys []string
		for _, id := range pendingTaskIDs(t, store, sendKillRun) {
			f := strings.Split(id, "/") // run/step/node/branch
			if len(f) != 4 || f[2] != "work" {
				continue
			}
			step, _ := strconv.Atoi(f[1])
			keys = append(keys, fmt.Sprintf("%d/%s", (step-2)/2, f[3]))
		}
		return keys
	},
	check: func(t *testing.T, store checkpoint.Store) {
		snap, want := killedAndClean(t, store, sendKillRun, sendKillState{}, func(opts ...graph.Option) (*graph.Runner[sendKillState], error) {
			return sendKillRunner(nil, opts...)
		})
		if snap.Status != graph.StatusDone || !slices.Equal(snap.State.Done, want.State.Done) || len(want.State.Done) != sendKillRounds*sendKillWays {
			t.Fatalf("killed run ended %s with %v; an uninterrupted one with %v", snap.Status, snap.State.Done, want.State.Done)
		}
	},
}

// TestKillSendFanOut kills a process running rounds of a 16-way Send
// fan-out on Badger at random moments: a branch whose pending write was
// saved never starts again, and the final state is an uninterrupted run's.
func TestKillSendFanOut(t *testing.T) { runKills(t, "send", 12) }

// --- Task: a loop whose node journals a side effect ---

const (
	taskKillRun   = "taskkill"
	taskKillSteps = 300
)

type taskKillState struct {
	Counter int
	Charges []string
}

func taskKillRunner(out *syncWriter, opts ...graph.Option) (*graph.Runner[taskKillState], error) {
	apply := func(ctx context.Context, s taskKillState) (taskKillState, error) {
		step := graph.StepOf(ctx)
		id, err := graph.Task(ctx, "charge", func(context.Context) (string, error) {
			if out != nil {
				out.println(fmt.Sprintf("start %d", step))
			}
			return fmt.Sprintf("charge-%d", s.Counter), nil
		})
		if err != nil {
			return s, err
		}
		time.Sleep(2 * time.Millisecond) // a window between the journal and the checkpoint
		return taskKillState{Counter: s.Counter + 1, Charges: append(slices.Clip(s.Charges), id)}, nil
	}
	more := func(_ context.Context, s taskKillState) ([]string, error) {
		if s.Counter < taskKillSteps {
			return []string{"apply"}, nil
		}
		return []string{graph.END}, nil
	}
	g := graph.New[taskKillState]().
		AddNode("apply", apply).
		AddEdge(graph.START, "apply").
		AddConditionalEdge("apply", more, "apply", graph.END)
	return g.Compile(opts...)
}

var taskKill = killScenario{
	run: func(ctx context.Context, store checkpoint.Store, out *syncWriter) error {
		r, err := taskKillRunner(out, graph.WithStore(store))
		if err != nil {
			return err
		}
		return resumeOrRun(ctx, r, taskKillRun, taskKillState{}, out)
	},
	saved: func(t *testing.T, store checkpoint.Store) []string {
		var keys []string
		for _, id := range pendingTaskIDs(t, store, taskKillRun) {
			rest, ok := strings.CutPrefix(id, "task:"+taskKillRun+"/")
			if ok {
				keys = append(keys, strings.SplitN(rest, "/", 2)[0]) // the step
			}
		}
		return keys
	},
	check: func(t *testing.T, store checkpoint.Store) {
		snap, want := killedAndClean(t, store, taskKillRun, taskKillState{}, func(opts ...graph.Option) (*graph.Runner[taskKillState], error) {
			return taskKillRunner(nil, opts...)
		})
		if snap.Status != graph.StatusDone || !slices.Equal(snap.State.Charges, want.State.Charges) {
			t.Fatalf("killed run ended %s with %v; an uninterrupted one with %v", snap.Status, snap.State.Charges, want.State.Charges)
		}
	},
}

// TestKillTask kills a process whose node journals a charge with Task at
// random moments: once the charge's result is saved, no later process
// charges again for that step, and the charges match an uninterrupted run.
func TestKillTask(t *testing.T) { runKills(t, "task", 15) }

// --- Subgraph: a ledger two subgraphs deep ---

const subKillRun = "subkill"

// midState is the middle graph's state: another type than the root's.
type midState struct {
	L ledger
}

func subKillRunner(opts ...graph.Option) (*graph.Runner[ledger], error) {
	inner, err := ledgerGraph().Compile(graph.WithStepLimit(crashSteps + 1))
	if err != nil {
		return nil, err
	}
	mid := graph.New[midState]()
	graph.AddSubgraph(mid, "inner", inner, func(m midState) ledger { return m.L }, func(_ midState, l ledger) midState { return midState{L: l} })
	mid.AddEdge(graph.START, "inner").AddEdge("inner", graph.END)
	midR, err := mid.Compile()
	if err != nil {
		return nil, err
	}
	root := graph.New[ledger]()
	graph.AddSubgraph(root, "mid", midR, func(l ledger) midState { return midState{L: l} }, func(_ ledger, m midState) ledger { return m.L })
	root.AddEdge(graph.START, "mid").AddEdge("mid", graph.END)
	return root.Compile(opts...)
}

var subgraphKill = killScenario{
	run: func(ctx context.Context, store checkpoint.Store, out *syncWriter) error {
		r, err := subKillRunner(graph.WithStore(store))
		if err != nil {
			return err
		}
		return resumeOrRun(ctx, r, subKillRun, freshLedger(), out)
	},
	saved: func(*testing.T, checkpoint.Store) []string { return nil },
	check: func(t *testing.T, store checkpoint.Store) {
		r, err := subKillRunner(graph.WithStore(store))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := r.State(context.Background(), subKillRun)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.IndexFunc(snap.State.Applied, func(c rune) bool { return c != '1' }); i >= 0 {
			t.Fatalf("step %d of the innermost graph applied %c times", i, snap.State.Applied[i])
		}
		if snap.Status != graph.StatusDone || snap.State.Counter != crashSteps {
			t.Fatalf("killed run ended %s with counter %d", snap.Status, snap.State.Counter)
		}
		kids, err := r.Children(context.Background(), subKillRun)
		if err != nil || len(kids) != 2 {
			t.Fatalf("children %+v, %v; want the middle and the inner run", kids, err)
		}
	},
}

// TestKillSubgraph kills a process running a 300-step ledger two
// subgraphs deep (each of another state type than its parent) at random
// checkpoints of any depth: no step is lost or applied twice.
func TestKillSubgraph(t *testing.T) { runKills(t, "subgraph", 15) }
