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
// once; the git history did not change by that.)
var offFingerprints = map[string][2]string{
	"retry": {"f6dde6b819271db4f04db3b6b90c36f6a1c3dbe10418beaf8edebccaa059518d", "7b651d05d5893e525d2a78fac00e967016924e0a5acc89e019bdee624ed381da"},
	"halt":  {"4f0aa6664e397817e289931e5ff294fbe03d877397f692d2d2ca75b46d38e470", "ed8282314925a8d15576603c5860acbd334feda7f7af62a5092a5cf2d49b8f74"},
}

// TestRecoveryOffIsTodaysRun runs a halting run and a run that needs a
// retry with recovery off and compares their final state and git history
// with main's, byte for byte (offFingerprints).
func TestRecoveryOffIsTodaysRun(t *testing.T) {
	halting := `
developer:
  - phase: 1
    actions:
      - write: {path: a_test.txt, content: "test\n"}
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
