package nodes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// offFingerprints are what main (before recovery was wired in) produced
// for the runs of TestRecoveryOffIsTodaysRun: the sha256 of the final
// state's JSON and of `git log --all --format=%H %T %s`. Recovery off
// must reproduce them byte for byte. The phases' git_settings (which name
// the test's temporary git directory) are left out of the sum.
// must reproduce them byte for byte. (The halt's state changed once on
// purpose since: its message counts the sessions of the last attempt,
// not "reviews" that did not all run — issue 20. The retry's changed
// once on purpose too: its phase 2 keeps the review that rejected attempt
// 1, in "rejections", for the inbox's phase card — issue 23. Both
// changed once more: a session that reports only a summary, and a review
// that says something, now write Task Story records, committed with the
// phase, whether recovery is on or off — issue 33. And once more with
// lanes — issue 31: the run's cursor is gone, each phase's lanes hold its
// session and review iteration, and the config says how many lanes run at
// once; the git history did not change by that. And once more: a
// rejected attempt is kept under refs/gaffer/attempts/ before its reset,
// which git log --all lists, and the phase's state names it in "kept",
// recovery on or off — issue 37.)
var offFingerprints = map[string][2]string{
	"retry": {"0087ea45eb9c58eb29563480c2cfcf59060036510e354a19590f96e09e236cb2", "385519b75bbb08faaff25125a578701ed3b125cb1ae881fb153bc6443ed2256a"},
	"halt":  {"502f8b55e32e048ecc091e5122c9fda0c02debea2f410d7e1671e2eee1b56bcd", "36315b9764460ca15542ef041f5a29da4a8415c43658943fb17cfa8f68996d38"},
}

// TestRecoveryOffIsTodaysRun runs a halting run and a run that needs a
// retry with recovery off and compares their final state and git history
// with main's, byte for byte (offFingerprints).
func TestRecoveryOffIsTodaysRun(t *testing.T) {
	halting := phase1OK + `
  - phase: 2
    actions:
      - write: {path: impl.txt, content: "bad\n"}
      - run: 'echo "--- FAIL: TestImpl (0.00s) impl_test.go:12: got 1, want 2" >&2; exit 1'
reviewer:
  - phase: 2
    approved: false
    comments: still wrong
`
	// The fingerprints name commits, so the identity they were made with is
	// part of them: the same one whatever the machine's (CI sets its own).
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		t.Setenv(v, "Seed 80b72d2e maintainers")
	}
	for _, v := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(v, "maintainers@users.noreply.a-seed-80b72d2e.example")
	}
	for name, script := range map[string]string{"halt": halting, "retry": retryScript} {
		h := newHarness(t, script)
		res, err := h.start(twoPhasePlan, state.RunConfig{AutoApprove: true})
		if err != nil {
			t.Fatal(err)
		}
		st := res.State.Clone()
		for i := range st.Progress.Phases {
			st.Progress.Phases[i].GitSettings = nil
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		got := [2]string{sum(b), sum([]byte(h.git("log", "--all", "--format=%H %T %s")))}
		if os.Getenv("GAFFER_PRINT_FINGERPRINTS") != "" {
			t.Logf("%q: {%q, %q},", name, got[0], got[1])
			continue
		}
		if want := offFingerprints[name]; got != want {
			t.Errorf("%s: recovery off gives state %s, history %s; main gave %s, %s", name, got[0], got[1], want[0], want[1])
		}
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
