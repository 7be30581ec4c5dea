package socket

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/control"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/host/hosttest"
)

// gitHead is the commit the fixture's checkout is at.
func gitHead(t *testing.T, repo string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// Merge, Diff, DeleteRuns and Prune answer alike in the process that
// holds the store and through its socket: a finished run's change is
// shown, merged after a dry run that changes nothing, and deleted with
// its merged branch after a check that changes nothing.
func TestGitOperationsLocallyAndThroughTheSocket(t *testing.T) {
	services(t, func(t *testing.T, f hosttest.Fixture, svc host.Service) {
		ctx := t.Context()
		spec := f.Spec("r-1")
		spec.AutoApprove = true
		if out, err := svc.Start(ctx, spec); err != nil || out.Kind != host.Completed {
			t.Fatalf("Start = %+v, %v; want completed", out, err)
		}
		d, err := svc.Diff(ctx, host.DiffRequest{RunID: "r-1"})
		if err != nil || !strings.HasPrefix(d.Header, "# run r-1, phases 1–2: git diff ") || !bytes.Contains(d.Patch, []byte("hello.txt")) {
			t.Fatalf("Diff = %q %q, %v; want phases 1–2 with hello.txt", d.Header, d.Patch, err)
		}
		if _, err := svc.Diff(ctx, host.DiffRequest{RunID: "r-1", Phase: 3}); host.CodeOf(err) != host.Usage || err.Error() != "--phase 3: run r-1 has 2 phases" {
			t.Fatalf("Diff of phase 3 of 2: %v (%s), want usage", err, host.CodeOf(err))
		}
		// A diff git cannot make (a repository without the run's commits)
		// still names the commits it was asked for, through the socket too.
		other := t.TempDir()
		if out, err := exec.Command("git", "init", "-q", other).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		d, err = svc.Diff(ctx, host.DiffRequest{RunID: "r-1", Repo: other})
		if host.CodeOf(err) != host.Refused || !strings.HasPrefix(d.Header, "# run r-1, phases 1–2: git diff ") || len(d.Patch) != 0 {
			t.Fatalf("Diff in a repository without the run's commits = %q %q, %v (%s); want the header and a refusal", d.Header, d.Patch, err, host.CodeOf(err))
		}
		before := gitHead(t, f.Repo)
		m, err := svc.Merge(ctx, host.MergeRequest{RunID: "r-1", DryRun: true})
		if err != nil || len(m.Lines) != 1 || !strings.HasPrefix(m.Lines[0], "Would fast-forward main to gaffer/r-1: 3 commits") {
			t.Fatalf("Merge --dry-run = %q, %v", m.Lines, err)
		}
		if got := gitHead(t, f.Repo); got != before {
			t.Fatalf("a dry run moved main from %s to %s", before, got)
		}
		if m, err = svc.Merge(ctx, host.MergeRequest{RunID: "r-1"}); err != nil || len(m.Lines) != 2 || !strings.HasPrefix(m.Lines[0], "Fast-forwarded main to gaffer/r-1") {
			t.Fatalf("Merge = %q, %v", m.Lines, err)
		}
		if _, err := os.Stat(filepath.Join(f.Repo, "hello.txt")); err != nil {
			t.Fatalf("the merged run's file is not in the checkout: %v", err)
		}
		del, err := svc.DeleteRuns(ctx, host.DeleteRequest{RunIDs: []string{"r-1"}, Check: true})
		if err != nil || del.Checkpoints == 0 || len(del.Notes) != 0 {
			t.Fatalf("DeleteRuns --check = %+v, %v", del, err)
		}
		if list, err := svc.List(ctx, host.ListRequest{}); err != nil || len(list) != 1 {
			t.Fatalf("a check deleted the run: %d runs, %v", len(list), err)
		}
		del, err = svc.DeleteRuns(ctx, host.DeleteRequest{RunIDs: []string{"r-1"}})
		if err != nil || len(del.Notes) != 1 || del.Notes[0] != "Deleted branch gaffer/r-1: its commits are merged." {
			t.Fatalf("DeleteRuns = %+v, %v", del, err)
		}
		if list, err := svc.List(ctx, host.ListRequest{}); err != nil || len(list) != 0 {
			t.Fatalf("List after DeleteRuns = %d runs, %v; want none", len(list), err)
		}
		if err := exec.Command("git", "-C", f.Repo, "rev-parse", "--verify", "-q", "refs/heads/gaffer/r-1").Run(); err == nil {
			t.Fatal("the merged branch of the deleted run is still there")
		}
		if p, err := svc.Prune(ctx, host.PruneRequest{Keep: 10, Remove: true}); err != nil || len(p.Old) != 0 || p.Summary != "" || len(p.Notes) != 0 {
			t.Fatalf("Prune of an empty store = %+v, %v; want nothing", p, err)
		}
	})
}

// A branch that is to go but is checked out is refused before anything
// changes, and a run the holder drives is refused by its holder; prune
// leaves alone the work tree of a run the holder drives before its first
// checkpoint.
func TestDeleteRunsRefusesAndChangesNothingThroughTheHolder(t *testing.T) {
	f := hosttest.New(t)
	h := f.Started(t, "r-1")
	if _, _, err := Listen(t.Context(), h, h.Holder("run"), control.Info{Kind: "run"}); err != nil {
		t.Fatal(err)
	}
	svc := NewClient(f.Store)
	if out, err := exec.Command("git", "-C", f.Repo, "checkout", "-q", "gaffer/r-1").CombinedOutput(); err != nil {
		t.Fatalf("checkout: %v %s", err, out)
	}
	_, err := svc.DeleteRuns(t.Context(), host.DeleteRequest{RunIDs: []string{"r-1"}, Branches: true})
	if host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "branch gaffer/r-1 is checked out in "+f.Repo) {
		t.Fatalf("DeleteRuns of a checked-out branch: %v (%s), want refused", err, host.CodeOf(err))
	}
	if list, err := svc.List(t.Context(), host.ListRequest{}); err != nil || len(list) != 1 {
		t.Fatalf("a refused delete changed the store: %d runs, %v", len(list), err)
	}
	// A stray work tree of no run in the store is pruned; with nothing
	// removed first, a dry prune names it.
	tree := filepath.Join(host.WorkTreesDir(f.Store), "r-2")
	if out, err := exec.Command("git", "-C", f.Repo, "worktree", "add", "-q", "--detach", tree, "main").CombinedOutput(); err != nil {
		t.Fatalf("worktree add: %v %s", err, out)
	}
	p, err := svc.Prune(context.Background(), host.PruneRequest{Keep: 10})
	if err != nil || p.Summary != "1 work tree" || p.Kept != 1 {
		t.Fatalf("Prune = %+v, %v; want 1 work tree, 1 run kept", p, err)
	}
	if _, err := os.Stat(tree); err != nil {
		t.Fatalf("a dry prune removed the work tree: %v", err)
	}
	if p, err = svc.Prune(t.Context(), host.PruneRequest{Keep: 10, Remove: true}); err != nil || len(p.Notes) != 1 {
		t.Fatalf("Prune remove = %+v, %v", p, err)
	}
	if _, err := os.Stat(tree); !os.IsNotExist(err) {
		t.Fatalf("the stray work tree is still there: %v", err)
	}
}

// A relative repository in a merge or diff request is this process's: the
// client makes it absolute before the holder, whose working directory may
// be elsewhere, sees it.
func TestAbsDirIsTheCallersPath(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"": "", ".": wd, "sub/repo": filepath.Join(wd, "sub/repo"), "/abs/repo": "/abs/repo"} {
		if got := absDir(in); got != want {
			t.Errorf("absDir(%q) = %q, want %q", in, got, want)
		}
	}
}
