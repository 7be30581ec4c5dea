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
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres/pgtest"
	"github.com/gaffer-dev/gaffer/graph"
)

// crashHelperEnv names the store directory when the test binary runs as the
// crash helper: a process that runs (or resumes) crashRun and prints
// "ack seq N" each time a checkpoint is saved.
const crashHelperEnv = "GAFFER_GRAPH_CRASH_HELPER_DIR"

const (
	crashSteps = 300
	crashRun   = "crash"
)

func TestMain(m *testing.M) {
	if killHelper() {
		return
	}
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		if err := crashHelper(dir, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "crash helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	pgtest.Main(m) // stops the PostgreSQL server the benchmarks may start
}

// ledger is the crash test's state: the number of steps applied and, for
// each step, how many times its effect was applied ('1' once, '2' twice...).
type ledger struct {
	Counter int
	Applied string
}

func ledgerGraph() *graph.Graph[ledger] {
	apply := func(_ context.Context, s ledger) (ledger, error) {
		b := []byte(s.Applied)
		b[s.Counter]++
		return ledger{Counter: s.Counter + 1, Applied: string(b)}, nil
	}
	more := func(_ context.Context, s ledger) ([]string, error) {
		if s.Counter < crashSteps {
			return []string{"apply"}, nil
		}
		return []string{graph.END}, nil
	}
	return graph.New[ledger]().
		AddNode("apply", apply).
		AddEdge(graph.START, "apply").
		AddConditionalEdge("apply", more, "apply", graph.END)
}

func freshLedger() ledger { return ledger{Applied: strings.Repeat("0", crashSteps)} }

func crashHelper(dir string, out io.Writer) error {
	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := ledgerGraph().Compile(graph.WithStore(store), graph.WithDurability(graph.Sync), graph.WithStepLimit(crashSteps+1))
	if err != nil {
		return err
	}
	r.Subscribe(func(e graph.Event) {
		if e.Kind == graph.CheckpointSaved {
			fmt.Fprintf(out, "ack seq %d\n", e.Seq)
		}
	})
	ctx := context.Background()
	_, err = r.Resume(ctx, crashRun)
	if errors.Is(err, graph.ErrRunNotFound) {
		_, err = r.Run(ctx, crashRun, freshLedger())
	}
	if errors.Is(err, graph.ErrRunDone) {
		// An earlier process finished the run before its kill landed (a
		// fast machine runs many steps between an ack and the signal).
		err = nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "done")
	return nil
}

// TestCrashResume kills a process running a 300-step graph on Badger with
// Sync durability at 25 random moments, resumes it each time, and checks that
// no step was lost or applied twice and no acknowledged checkpoint is missing.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 26 processes")
	}
	seed := crashSeed(t, 20261123)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	start := func() (*exec.Cmd, *bufio.Scanner) { return startHelper(t, crashHelperEnv+"="+dir) }
	var lastAck uint64
	for kill := range 25 {
		after := 1 + rng.IntN(15) // acks to wait for before the kill
		cmd, lines := start()
		acks := 0
		for acks < after && lines.Scan() {
			if n, ok := strings.CutPrefix(lines.Text(), "ack seq "); ok {
				lastAck, _ = strconv.ParseUint(n, 10, 64)
				acks++
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() { // acks printed before the kill landed count too
			if n, ok := strings.CutPrefix(lines.Text(), "ack seq "); ok {
				lastAck, _ = strconv.ParseUint(n, 10, 64)
			}
		}
		_ = cmd.Wait()
		latest := latestSeq(t, dir)
		t.Logf("kill %2d after %2d acks: last ack seq %d, store latest seq %d", kill+1, after, lastAck, latest)
		if latest < lastAck {
			t.Fatalf("kill %d: acknowledged checkpoint %d missing (store has %d)", kill+1, lastAck, latest)
		}
	}
	cmd, lines := start()
	finishHelper(t, cmd, lines, nil)

	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	snap, want := killedAndClean(t, store, crashRun, freshLedger(), func(opts ...graph.Option) (*graph.Runner[ledger], error) {
		return ledgerGraph().Compile(append(opts, graph.WithStepLimit(crashSteps+1))...)
	})
	if i := strings.IndexFunc(snap.State.Applied, func(c rune) bool { return c != '1' }); i >= 0 {
		t.Fatalf("step %d applied %c times", i, snap.State.Applied[i])
	}
	if snap.State != want.State || snap.Status != graph.StatusDone || snap.Step != crashSteps {
		t.Fatalf("crashed run ended with %+v (step %d), an uninterrupted one with %+v", snap.State, snap.Step, want.State)
	}
}

func latestSeq(t *testing.T, dir string) uint64 {
	t.Helper()
	store, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cp, err := store.Latest(context.Background(), crashRun)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return cp.Seq
}
