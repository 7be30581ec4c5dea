package cli

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// commitTimes returns the committer times (unix seconds) of the commits
// from HEAD back, newest first, with their subjects.
func commitTimes(t *testing.T, dir string) (times []int64, subjects []string) {
	t.Helper()
	for _, l := range strings.Split(gitOut(t, dir, "log", "--format=%ct %at %s"), "\n") {
		f := strings.SplitN(l, " ", 3)
		ct, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || f[0] != f[1] {
			t.Fatalf("log line %q: committer and author time differ or do not parse", l)
		}
		times, subjects = append(times, ct), append(subjects, f[2])
	}
	return times, subjects
}

// TestCommitsAreDatedWhenMade: the demo repository's only commit is from
// 2026-01-01; the run's commits are dated when they were made, not one
// second after it.
func TestCommitsAreDatedWhenMade(t *testing.T) {
	dir, plan, script := demoRepo(t)
	start := time.Now().Unix()
	if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	times, subjects := commitTimes(t, dir)
	if len(times) != 6 { // 4 phases, the record, the demo's first commit
		t.Fatalf("%d commits: %v", len(times), subjects)
	}
	base := times[len(times)-1]
	for i, ct := range times[:len(times)-1] {
		if ct < start {
			t.Errorf("%q is dated %s, before the run started (%s); the repository's first commit is %s",
				subjects[i], time.Unix(ct, 0).UTC(), time.Unix(start, 0).UTC(), time.Unix(base, 0).UTC())
		}
	}
}

// TestReproducibleDatesAreOptIn: GAFFER_REPRODUCIBLE_DATES=1 dates each
// commit one second after its parent, so two runs make the same commits.
func TestReproducibleDatesAreOptIn(t *testing.T) {
	t.Setenv("GAFFER_REPRODUCIBLE_DATES", "1")
	var heads []string
	for range 2 {
		dir, plan, script := demoRepo(t)
		if out, code := gaffer(t, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--run-id", "r-20260101-repro0"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
		times, subjects := commitTimes(t, dir)
		for i := 0; i+1 < len(times); i++ {
			if times[i] != times[i+1]+1 {
				t.Fatalf("%q is dated %d, want its parent's %d + 1", subjects[i], times[i], times[i+1])
			}
		}
		heads = append(heads, gitOut(t, dir, "rev-parse", "HEAD"))
	}
	if heads[0] != heads[1] {
		t.Fatalf("two reproducible runs made different commits: %v", heads)
	}
}
