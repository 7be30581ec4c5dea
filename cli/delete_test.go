package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gaffer-dev/gaffer/runview"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gafferTTY runs the CLI in-process as on a terminal that answers in.
func gafferTTY(t *testing.T, in string, args ...string) (string, int) {
	t.Helper()
	var buf bytes.Buffer
	app := NewWithIO("test", IO{In: strings.NewReader(in), Out: &buf, Err: &buf, Terminal: func() bool { return true }})
	err := app.RunContext(context.Background(), append([]string{"gaffer"}, args...))
	Report(&buf, err)
	return buf.String(), ExitCode(err)
}

func listIDs(t *testing.T, dir string) []string {
	t.Helper()
	out, code := gaffer(t, "--repo", dir, "list", "--json")
	var vs []runview.Run
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.RunID)
	}
	return ids
}

// TestDeleteAndPrune: delete removes a finished run (after a yes on a
// terminal) with its transcripts and refuses an unfinished one; prune
// removes the finished runs beyond --keep; commits stay in git.
func TestDeleteAndPrune(t *testing.T) {
	dir, plan, script := demoRepo(t)
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-aaaaaa"); code != 0 {
		t.Fatalf("run a: exit %d\n%s", code, out)
	}
	commits := gitOut(t, dir, "rev-list", "--count", "HEAD")
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-20260102-bbbbbb"); code != ExitAwaitingApproval {
		t.Fatalf("run b: exit %d", code)
	}
	if _, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--run-id", "r-20260103-cccccc"); code != ExitAwaitingApproval {
		t.Fatalf("run c: exit %d", code)
	}
	if _, code := gaffer(t, "--repo", dir, "reject", "r-20260103-cccccc"); code != ExitRejected {
		t.Fatalf("reject c: exit %d", code)
	}

	out, code := gaffer(t, "--repo", dir, "delete", "r-20260102-bbbbbb")
	if code != ExitPrecondition || !strings.Contains(out, "run r-20260102-bbbbbb is awaiting_approval; cancel it first") {
		t.Fatalf("delete of a waiting run: exit %d\n%s", code, out)
	}
	out, code = gafferTTY(t, "n\n", "--repo", dir, "delete", "r-20260101-aaaaaa")
	if code != 0 || !strings.Contains(out, "Delete run r-20260101-aaaaaa from the store, about ") || !strings.HasSuffix(out, "Nothing deleted.\n") {
		t.Fatalf("delete, answered no: exit %d\n%s", code, out)
	}
	if got := len(listIDs(t, dir)); got != 3 {
		t.Fatalf("%d runs after a no", got)
	}
	logs := filepath.Join(dir, ".git", "gaffer.logs", "r-20260101-aaaaaa")
	if _, err := os.Stat(logs); err != nil {
		t.Fatalf("run a's transcripts: %v", err)
	}
	out, code = gafferTTY(t, "y\n", "--repo", dir, "delete", "r-20260101-aaaaaa")
	if code != 0 || !strings.HasSuffix(out, "Deleted run r-20260101-aaaaaa.\n") {
		t.Fatalf("delete, answered yes: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(logs); !os.IsNotExist(err) {
		t.Fatalf("run a's transcripts are still there: %v", err)
	}
	if out, code := gaffer(t, "--repo", dir, "status", "r-20260101-aaaaaa"); code != ExitPrecondition {
		t.Fatalf("status of a deleted run: exit %d\n%s", code, out)
	}
	if got := gitOut(t, dir, "rev-list", "--count", "HEAD"); got != commits {
		t.Fatalf("%s commits after delete, want %s", got, commits)
	}

	out, code = gaffer(t, "--repo", dir, "prune", "--keep", "1")
	if code != 0 || out != "Nothing to prune: 1 finished run kept.\n" {
		t.Fatalf("prune --keep 1: exit %d\n%q", code, out)
	}
	out, code = gaffer(t, "--repo", dir, "prune", "--keep", "0")
	if code != 0 || out != "Deleted run r-20260103-cccccc.\n" {
		t.Fatalf("prune --keep 0: exit %d\n%q", code, out)
	}
	if got := listIDs(t, dir); len(got) != 1 || got[0] != "r-20260102-bbbbbb" {
		t.Fatalf("runs after prune: %v", got)
	}
}
