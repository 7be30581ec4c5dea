package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// randomOps changes the work tree at random within a small namespace of
// directories and names that never collide (no file/directory swaps).
func randomOps(f *fixture, rng *rand.Rand, n int) {
	dirs := []string{"", "a/", "a/b/", "c/", "out/"}
	names := []string{"x.txt", "y.go", "z.log", "run.sh", "w.md"}
	for range n {
		p := dirs[rng.IntN(len(dirs))] + names[rng.IntN(len(names))]
		switch op := rng.IntN(10); {
		case op < 5:
			var lines []string
			for range 1 + rng.IntN(6) {
				lines = append(lines, fmt.Sprintf("line %d", rng.IntN(4)))
			}
			f.write(p, strings.Join(lines, "\n")+"\n")
		case op < 7:
			if f.exists(p) {
				f.remove(p)
			}
		case op < 9:
			if fi, err := os.Lstat(f.abs(p)); err == nil && fi.Mode().IsRegular() {
				f.chmod(p, fi.Mode().Perm()^0o111)
			}
		default:
			if !f.exists(p) {
				f.symlink(p, "target.txt")
			}
		}
	}
}

// TestResetToMatchesGit runs random attempts and compares ResetTo with
// what the git command does in a copy of the repository: `git reset
// --hard PRE` then `git clean -fd` sparing the kept files. Both must leave
// the same files, contents and executable bits (ignored files included).
func TestResetToMatchesGit(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2026))
			f := newFixture(t)
			f.write(".gitignore", "*.log\nout/\n")
			randomOps(f, rng, 15)
			f.commit("base")
			randomOps(f, rng, 8)
			pre := f.commitOpts("pre-phase", nil, CommitOptions{AllowEmpty: true})
			f.write("user/notes.txt", "mine\n")
			f.write("todo.md", "mine\n")
			f.write("user.log", "ignored, mine\n")
			randomOps(f, rng, 3)
			keep, err := f.repo.Untracked(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 1 + rng.IntN(3) {
				randomOps(f, rng, 10)
				if rng.IntN(2) == 0 {
					f.commitOpts(fmt.Sprintf("attempt %d", i), nil, CommitOptions{Exclude: keep, AllowEmpty: true})
				}
			}
			if rng.IntN(2) == 0 {
				f.git("add", "-A", ".") // some staged work too
				// git reset --hard would delete staged files; ResetTo keeps
				// them when they are kept, so unstage those in both.
				f.git(append([]string{"reset", "-q", "--"}, keep...)...)
			}

			checkStatusAgainstGit(t, f)

			twin := filepath.Join(t.TempDir(), "twin")
			if out, err := exec.Command("cp", "-a", f.dir, twin).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			if err := f.repo.ResetTo(f.ctx, pre, keep); err != nil {
				t.Fatal(err)
			}
			runGit(t, twin, "reset", "-q", "--hard", pre)
			clean := []string{"clean", "-q", "-fd"}
			for _, k := range keep {
				clean = append(clean, "-e", "/"+k)
			}
			runGit(t, twin, clean...)

			ours, theirs := treeSnapshot(t, f.dir), treeSnapshot(t, twin)
			if !equalTrees(ours, theirs) {
				t.Fatalf("ResetTo and git differ (+ ours only, - git only):\n%s", diffTrees(ours, theirs))
			}
			if f.head() != pre {
				t.Fatal("HEAD not at the pre-phase commit")
			}
			if got, want := f.porcelain(), sortedLines(runGit(t, twin, "status", "--porcelain=v1", "-uall")); !equalStrings(got, want) {
				t.Fatalf("git status: ours %q, git's %q", got, want)
			}
			var kept []string // the attempt may have deleted some
			for _, k := range keep {
				if f.exists(k) {
					kept = append(kept, k)
				}
			}
			if st := f.status(); !equalStrings(st.Untracked, kept) || len(st.Modified)+len(st.Added)+len(st.Deleted) != 0 {
				t.Fatalf("Status = %+v, kept %q", st, kept)
			}
		})
	}
}

// checkStatusAgainstGit compares Status with `git status --porcelain`,
// read the way Status reports: any staged or unstaged change of a file at
// HEAD is Modified, a new file in the index is Added.
func checkStatusAgainstGit(t *testing.T, f *fixture) {
	t.Helper()
	var want Status
	for _, l := range f.porcelain() {
		xy, p := l[:2], l[3:]
		switch {
		case xy == "??":
			want.Untracked = append(want.Untracked, p)
		case xy[0] == 'A':
			want.Added = append(want.Added, p)
		case xy[0] == 'D' || xy[1] == 'D':
			want.Deleted = append(want.Deleted, p)
		default:
			want.Modified = append(want.Modified, p)
		}
	}
	got := f.status()
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"Modified", got.Modified, want.Modified},
		{"Added", got.Added, want.Added},
		{"Deleted", got.Deleted, want.Deleted},
		{"Untracked", got.Untracked, sortedLines(strings.Join(want.Untracked, "\n"))},
	} {
		if !equalStrings(c.got, sortedLines(strings.Join(c.want, "\n"))) {
			t.Fatalf("Status.%s = %q, git says %q", c.name, c.got, c.want)
		}
	}
}
