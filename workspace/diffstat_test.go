package workspace

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// numstat is `git diff --numstat --no-renames A B` as FileStat strings.
func (f *fixture) numstat(a, b string) []string {
	f.t.Helper()
	if a == "" {
		a = emptyTree
	}
	return sortedLines(f.git("diff", "--numstat", "--no-renames", a, b))
}

func statLines(st []FileStat) []string {
	var out []string
	for _, s := range st {
		out = append(out, s.String())
	}
	return sortedLines(strings.Join(out, "\n"))
}

func (f *fixture) checkDiffStat(a, b string) []FileStat {
	f.t.Helper()
	st, err := f.repo.DiffStat(f.ctx, a, b)
	if err != nil {
		f.t.Fatal(err)
	}
	if got, want := statLines(st), f.numstat(a, b); !equalStrings(got, want) {
		f.t.Fatalf("DiffStat(%s, %s) = %q, git says %q", short8(a), short8(b), got, want)
	}
	return st
}

func short8(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

func TestDiffStatMatchesGitNumstat(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "1\n2\n3\n4\n5\n")
	f.write("gone.txt", "x\ny\n")
	f.write("mode.sh", "#!/bin/sh\n")
	f.write("noeol.txt", "last")
	f.write("bin.dat", "\x00\x01\x02")
	f.write("dir/keep.txt", "same\n")
	a := f.commit("a")
	f.write("a.txt", "1\nTWO\n3\n5\nsix\n")
	f.remove("gone.txt")
	f.chmod("mode.sh", 0o755)
	f.write("noeol.txt", "last\n")
	f.write("bin.dat", "\x00\x01\x03")
	f.write("dir/new.txt", "n1\nn2\nn3\n")
	f.symlink("link", "a.txt")
	b := f.commit("b")

	st := f.checkDiffStat(a, b)
	byPath := map[string]FileStat{}
	for _, s := range st {
		byPath[s.Path] = s
	}
	if s := byPath["a.txt"]; s.Added != 2 || s.Deleted != 2 {
		t.Errorf("a.txt = %+v", s)
	}
	if s := byPath["bin.dat"]; !s.Binary {
		t.Errorf("bin.dat = %+v", s)
	}
	if s, ok := byPath["mode.sh"]; !ok || s.Added+s.Deleted != 0 {
		t.Errorf("mode.sh = %+v, %v", s, ok)
	}
	f.checkDiffStat("", a) // from the empty tree
	f.checkDiffStat(b, a)  // backwards
	f.checkDiffStat("HEAD~1", "HEAD")
	if st, err := f.repo.DiffStat(f.ctx, a, a); err != nil || len(st) != 0 {
		t.Errorf("DiffStat(a, a) = %v, %v", st, err)
	}
	if _, err := f.repo.DiffStat(f.ctx, "nope", b); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("DiffStat(unknown) = %v", err)
	}
}

// TestDiffStatRandomEdits compares line counts with git on random edits,
// where a diff that is not minimal would show.
func TestDiffStatRandomEdits(t *testing.T) {
	f := newFixture(t)
	rng := rand.New(rand.NewPCG(7, 11))
	files := 12
	var lines [][]string
	for i := range files {
		var l []string
		for range 20 + rng.IntN(40) {
			l = append(l, fmt.Sprintf("v%d", rng.IntN(8)))
		}
		lines = append(lines, l)
		f.write(fmt.Sprintf("f%d.txt", i), strings.Join(l, "\n")+"\n")
	}
	prev := f.commit("start")
	for round := range 4 {
		for i := range files {
			l := lines[i]
			for range rng.IntN(12) {
				pos := rng.IntN(len(l) + 1)
				switch rng.IntN(3) {
				case 0:
					l = append(l[:pos], append([]string{fmt.Sprintf("n%d", rng.IntN(8))}, l[pos:]...)...)
				case 1:
					if pos < len(l) {
						l = append(l[:pos], l[pos+1:]...)
					}
				default:
					if pos < len(l) {
						l[pos] = fmt.Sprintf("v%d", rng.IntN(8))
					}
				}
			}
			lines[i] = l
			f.write(fmt.Sprintf("f%d.txt", i), strings.Join(l, "\n")+"\n")
		}
		next := f.commitOpts(fmt.Sprintf("round %d", round), nil, CommitOptions{AllowEmpty: true})
		f.checkDiffStat(prev, next)
		prev = next
	}
}

func TestLineChangesCapFallsBackToAnEstimate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := []byte("a\nb\nc\nd\n")
	b := []byte("d\nc\nb\na\nz\n")
	added, deleted := lineChanges(ctx, a, b) // cancelled: estimate
	if added != 1 || deleted != 0 {
		t.Fatalf("estimate = +%d -%d, want +1 -0", added, deleted)
	}
	added, deleted = lineChanges(context.Background(), a, b)
	if added != 4 || deleted != 3 {
		t.Fatalf("exact = +%d -%d, want +4 -3", added, deleted)
	}
}
