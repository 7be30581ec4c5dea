package inbox

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestIndexOfManyRuns: with more runs than the index shows, it shows every
// run that needs a person and the newest of the others, says how many it
// left out, and shows them all with ?all=1 (its live part too).
func TestIndexOfManyRuns(t *testing.T) {
	s, svc := newTest(t, "")
	base := fixtures()
	done := base[0]
	runs := append(base[:0:0], base[1:]...) // two that need a person, one queued
	others := 0
	for _, r := range runs {
		if !waitsForAPerson(r) {
			others++
		}
	}
	for i := range indexShown + 50 {
		r := done
		r.Snapshot.RunID = fmt.Sprintf("r-old-%03d", i)
		r.Snapshot.State.Run.ID = r.Snapshot.RunID
		r.Snapshot.State.Run.CreatedAt = t0.Add(-time.Duration(i+2) * time.Hour)
		runs = append(runs, r)
	}
	svc.runs = runs
	body := get(t, s, "/", fixedCookie(s)).Body.String()
	last := indexShown - others - 1 // the oldest shown
	for _, want := range []string{"r-20260102-plan", "r-20260103-ask", "r-old-000", fmt.Sprintf("r-old-%03d<", last),
		fmt.Sprintf("%d older run(s) not shown", 50+others), `href="/?all=1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the index lacks %q", want)
		}
	}
	if strings.Contains(body, fmt.Sprintf("r-old-%03d<", last+1)) {
		t.Errorf("the index shows more than %d runs that need no one", indexShown)
	}
	for _, path := range []string{"/?all=1", "/live?all=1"} {
		all := get(t, s, path, fixedCookie(s)).Body.String()
		if !strings.Contains(all, fmt.Sprintf("r-old-%03d<", indexShown+49)) || strings.Contains(all, "not shown") {
			t.Errorf("%s does not show every run", path)
		}
	}
	if all := get(t, s, "/?all=1", fixedCookie(s)).Body.String(); !strings.Contains(all, `data-src="/live?all=1"`) {
		t.Error("the page of every run refreshes the index of some")
	}
}
