package nodes

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/script"
	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// recDriver records every session and the session id it got back.
type recDriver struct {
	inner    agent.Driver
	mu       sync.Mutex
	sessions []agent.Session
	ids      []string
}

func (d *recDriver) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	rep, err := d.inner.Run(ctx, s)
	d.mu.Lock()
	s.OnMessage = nil
	d.sessions = append(d.sessions, s)
	d.ids = append(d.ids, rep.SessionID)
	d.mu.Unlock()
	return rep, err
}

// of returns the recorded sessions of a role, with the ids they got.
func (d *recDriver) of(role agent.Role) ([]agent.Session, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ss []agent.Session
	var ids []string
	for i, s := range d.sessions {
		if s.Role == role {
			ss, ids = append(ss, s), append(ids, d.ids[i])
		}
	}
	return ss, ids
}

// faultStore fails the first Put of a checkpoint for which fail is true,
// after which the process "crashed" between a side effect and its
// checkpoint.
// errCrash is the injected failure: the checkpoint is never written.
var errCrash = errors.New("injected crash: checkpoint lost")

type faultStore struct {
	checkpoint.Store
	mu     sync.Mutex
	fail   func(cp checkpoint.Checkpoint) bool
	failed bool
	puts   atomic.Int64 // checkpoints written
}

func (f *faultStore) Put(ctx context.Context, cp checkpoint.Checkpoint, opts checkpoint.PutOptions) error {
	f.mu.Lock()
	hit := !f.failed && f.fail != nil && f.fail(cp)
	if hit {
		f.failed = true
	}
	f.mu.Unlock()
	if hit {
		return errCrash
	}
	f.puts.Add(1)
	return f.Store.Put(ctx, cp, opts)
}

// failAt makes h's store fail its k-th checkpoint (the first is 1): the
// process "dies" after that step's side effects, before its checkpoint.
func (h *harness) failAt(k int64) {
	var n atomic.Int64
	h.store.fail = func(checkpoint.Checkpoint) bool { return n.Add(1) == k }
}

// firstHolding makes h's store count the checkpoints it writes and
// returns where the number of the first whose values hold marker goes
// (0 until one does).
func (h *harness) firstHolding(marker []byte) *atomic.Int64 {
	var seen, first atomic.Int64
	h.store.fail = func(cp checkpoint.Checkpoint) bool {
		n := seen.Add(1)
		for _, v := range cp.Values {
			if first.Load() == 0 && bytes.Contains(v, marker) {
				first.Store(n)
			}
		}
		return false
	}
	return &first
}

// resumeCrashed resumes r-1, whose checkpoint k was lost (failAt), while
// it stops at the injected crash, at most 3 times, and returns its end.
func (h *harness) resumeCrashed(k int64, res graph.Result[state.ExecutionState], err error) (graph.Result[state.ExecutionState], error) {
	h.t.Helper()
	for i := 0; errors.Is(err, errCrash); i++ {
		if i > 3 {
			h.t.Fatalf("checkpoint %d lost: no end after 3 resumes", k)
		}
		res, err = h.runner.Resume(context.Background(), "r-1")
	}
	return res, err
}

type harness struct {
	t      *testing.T
	dir    string
	repo   *workspace.Repo
	rec    *recDriver
	store  *faultStore
	runner *graph.Runner[state.ExecutionState]
}

// newHarness makes a repository with one commit (and an untracked
// notes.txt of the user's), a Badger store and the workflow on the script.
func newHarness(t *testing.T, scriptText string) *harness {
	t.Helper()
	dir := t.TempDir()
	repo, err := workspace.Init(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "README.md", "# test\n")
	if _, err := repo.Commit(context.Background(), "initial", nil, workspace.CommitOptions{
		Author: workspace.Signature{Name: "t", Email: "t@example.invalid"}, When: fixedTime}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "notes.txt", "the user's own notes\n")
	sc, err := script.Parse("script.yaml", []byte(scriptText))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := badger.Open(t.TempDir(), badger.Options{SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bs.Close() })
	h := &harness{t: t, dir: dir, repo: repo, rec: &recDriver{inner: script.NewDriver(sc, script.Options{})}, store: &faultStore{Store: bs}}
	g, err := Build(Config{Repo: repo, Clock: func() time.Time { return fixedTime }, Drivers: func(role agent.Role, _ state.RunConfig) (agent.Driver, error) {
		if (role == agent.RoleEvaluator || role == agent.RoleDoctor || role == agent.RoleReplanner) && !sc.Has(role) {
			return nil, nil
		}
		return h.rec, nil
	}, Commands: testCommands})
	if err != nil {
		t.Fatal(err)
	}
	if h.runner, err = g.Compile(graph.WithStore(h.store), graph.WithDurability(graph.Sync), graph.WithCodec(NewCodec()), graph.WithMerge(Merge)); err != nil {
		t.Fatal(err)
	}
	return h
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs r-1 with plan (unparsed; "" asks the architect).
func (h *harness) start(plan string, cfg state.RunConfig) (graph.Result[state.ExecutionState], error) {
	h.t.Helper()
	s, err := state.NewRun(state.RunInfo{ID: "r-1", Goal: "build it", CreatedAt: fixedTime}, cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	s.Plan.Markdown = plan
	return h.runner.Run(context.Background(), "r-1", s)
}

// git runs the git command in the repository and returns its output.
func (h *harness) git(args ...string) string {
	h.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = h.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (h *harness) subjects() []string {
	return strings.Split(h.git("log", "--format=%s"), "\n")
}

func mustDone(t *testing.T, res graph.Result[state.ExecutionState], err error, want state.RunStatus) state.ExecutionState {
	t.Helper()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != graph.Done {
		t.Fatalf("run stopped %v, want done", res.Status)
	}
	if res.State.Status != want {
		t.Fatalf("run status %v, want %v (errors: %q)", res.State.Status, want, res.State.Errors)
	}
	return res.State
}
