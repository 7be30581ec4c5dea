package workspace

import (
	"strings"
	"testing"
)

func TestFindCommitByTrailers(t *testing.T) {
	f := newFixture(t)
	var hashes []string
	for i, tr := range [][]Trailer{
		gafferTrailers("r1", "1", "1"),
		gafferTrailers("r1", "2", "1"),
		gafferTrailers("r1", "2", "2"),
		gafferTrailers("r2", "1", "1"),
	} {
		f.write("f.txt", strings.Repeat("x", i+1))
		hashes = append(hashes, f.commit("phase", tr...))
	}
	h, ok, err := f.repo.FindCommit(f.ctx, "HEAD", HasTrailers(Trailer{"Gaffer-Run", "r1"}, Trailer{"gaffer-phase", "2"}), 10)
	if err != nil || !ok || h != hashes[2] {
		t.Fatalf("FindCommit = %s, %v, %v; want the latest r1 phase 2 %s", h, ok, err, hashes[2])
	}
	h, ok, err = f.repo.FindCommit(f.ctx, hashes[1], HasTrailers(Trailer{"Gaffer-Run", "r1"}), 0)
	if err != nil || !ok || h != hashes[1] {
		t.Fatalf("FindCommit from a hash = %s, %v, %v", h, ok, err)
	}
	// Out of reach within the limit.
	if _, ok, err := f.repo.FindCommit(f.ctx, "HEAD", HasTrailers(Trailer{"Gaffer-Phase", "1"}, Trailer{"Gaffer-Run", "r1"}), 3); ok || err != nil {
		t.Fatalf("FindCommit beyond the limit = %v, %v", ok, err)
	}
	// By message.
	h, ok, _ = f.repo.FindCommit(f.ctx, "main", func(msg string, _ []Trailer) bool { return strings.HasPrefix(msg, "phase") }, 1)
	if !ok || h != hashes[3] {
		t.Fatalf("FindCommit by message = %s, %v", h, ok)
	}
	// Adopting: the commit at HEAD is this phase's own.
	ts, err := f.repo.Trailers(f.ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := TrailerValue(ts, "Gaffer-Run"); v != "r2" {
		t.Fatalf("HEAD's run = %q", v)
	}

	log, err := f.repo.Log(f.ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Hash != hashes[3] || log[1].Hash != hashes[2] || log[0].Subject != "phase" {
		t.Fatalf("Log(2) = %+v", log)
	}
	if v, _ := TrailerValue(log[1].Trailers, "Gaffer-Attempt"); v != "2" || log[0].Author != testAuthor {
		t.Fatalf("Log entry = %+v", log[1])
	}
	all, err := f.repo.Log(f.ctx, 0)
	if err != nil || len(all) != 4 {
		t.Fatalf("Log(0) = %d entries, %v", len(all), err)
	}
}

func TestLogAndFindCommitOnUnbornBranch(t *testing.T) {
	f := newFixture(t)
	log, err := f.repo.Log(f.ctx, 5)
	if err != nil || len(log) != 0 {
		t.Fatalf("Log = %v, %v", log, err)
	}
	_, ok, err := f.repo.FindCommit(f.ctx, "HEAD", HasTrailers(), 0)
	if ok || err != nil {
		t.Fatalf("FindCommit = %v, %v", ok, err)
	}
}
