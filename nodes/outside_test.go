package nodes

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// userDuringReview edits the work tree the first time phase 1's reviewer
// is asked, as a user at their editor would while the review runs.
type userDuringReview struct {
	inner agent.Driver
	dir   string
	once  sync.Once
}

func (d *userDuringReview) Run(ctx context.Context, s agent.Session) (agent.Report, error) {
	if s.Role == agent.RoleReviewer && s.Phase == 1 {
		d.once.Do(func() {
			_ = os.WriteFile(filepath.Join(d.dir, "a_test.txt"), []byte("test, improved by me\n"), 0o644)
			_ = os.WriteFile(filepath.Join(d.dir, "mine.go"), []byte("package mine\n"), 0o644)
			_ = os.WriteFile(filepath.Join(d.dir, "README.md"), []byte("# my readme\n"), 0o644)
		})
	}
	return d.inner.Run(ctx, s)
}

// TestEditsOutsideTheSessionAreNotCommitted: files changed while phase 1
// is reviewed stop the run before its commit, naming each path and how
// to put the agent's version back; following that, resume commits the
// agent's work alone.
func TestEditsOutsideTheSessionAreNotCommitted(t *testing.T) {
	h := newHarness(t, retryScript)
	h.rec.inner = &userDuringReview{inner: h.rec.inner, dir: h.dir}
	_, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
	var oe *OutsideEditsError
	if !errors.Is(err, ErrOutsideEdits) || !errors.As(err, &oe) {
		t.Fatalf("run: %v, want ErrOutsideEdits", err)
	}
	if want := []string{"README.md", "a_test.txt", "mine.go"}; !slices.Equal(oe.Paths, want) || oe.Phase != 1 {
		t.Fatalf("error names phase %d, %q; want phase 1, %q", oe.Phase, oe.Paths, want)
	}
	msg := err.Error()
	for _, want := range []string{"phase 1: changed outside the agent's session after it ended: README.md, a_test.txt, mine.go;",
		"git checkout HEAD -- README.md", "git cat-file -p ", "> a_test.txt", "rm mine.go"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message lacks %q:\n%s", want, msg)
		}
	}
	if got := h.subjects(); !slices.Equal(got, []string{"initial"}) {
		t.Fatalf("commits after the refusal: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "mine.go")); string(b) != "package mine\n" {
		t.Fatalf("the user's file was touched: %q", b)
	}

	// Resuming without putting things back is refused again.
	if _, err := h.runner.Resume(context.Background(), "r-1"); !errors.Is(err, ErrOutsideEdits) {
		t.Fatalf("resume with the edits still there: %v", err)
	}
	// The message's commands put the agent's version back.
	for _, p := range oe.Paths {
		cmd := exec.Command("sh", "-c", oe.Fixes[p])
		cmd.Dir = h.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", oe.Fixes[p], err, out)
		}
	}
	res, err := h.runner.Resume(context.Background(), "r-1")
	mustDone(t, res, err, state.RunCompleted)
	if got := h.git("show", "HEAD~2:a_test.txt"); got != "test" {
		t.Fatalf("phase 1 committed a_test.txt = %q, want the agent's", got)
	}
	if out := h.git("log", "--format=%h", "--", "mine.go"); out != "" {
		t.Fatalf("mine.go was committed: %s", out)
	}
	if out := h.git("log", "--format=%s", "--", "README.md"); out != "initial" {
		t.Fatalf("README.md was committed by the run: %s", out)
	}
}
