package workspace

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkPhaseOverhead measures gaffer's own git work for one phase of a
// run on generated repositories of 1k, 10k and (with GAFFER_BENCH_100K=1)
// 100k files, beside the native git binary doing the same work in the
// same run on the same repository, and reports both and their ratio:
// x-native for wall time, cpu-x-native for CPU time (user and system,
// the git processes' included on both sides), which a loaded machine
// disturbs less.
//
// The work of a phase is what the workflow (package nodes) asks of git:
// the pre-phase snapshot (HEAD, the untracked files), the check that the
// tree is clean at the pre-phase commit, the agent's change (one new file
// and one edited file, in two directories), the list of what the session
// changed and its fingerprint, the outside-edits check (the same list and
// fingerprint again), and the commit of everything but the user's
// untracked files. Native git does the same: `git status` four times,
// `git hash-object` twice, `git add -A` and `git commit`.
//
// In mode "worktree" (a default-mode run) each iteration also sets up the
// run's own work tree and removes it at the end, AddWorkTree and
// RemoveWorkTree beside `git worktree add` and `git worktree remove`; the
// setup alone is reported as setup-x-native.
//
//	go test -run '^$' -bench PhaseOverhead -benchtime 5x ./workspace
//	GAFFER_BENCH_100K=1 go test -run '^$' -bench PhaseOverhead -benchtime 3x -timeout 60m ./workspace
func BenchmarkPhaseOverhead(b *testing.B) {
	sizes := []int{1000, 10000}
	if os.Getenv("GAFFER_BENCH_100K") == "1" {
		sizes = append(sizes, 100000)
	}
	for _, n := range sizes {
		dir := filepath.Join(b.TempDir(), "repo")
		genRepo(b, dir, n)
		for _, mode := range []string{"inplace", "worktree"} {
			b.Run(fmt.Sprintf("files=%d/mode=%s", n, mode), func(b *testing.B) {
				benchPhase(b, dir, mode == "worktree")
			})
		}
	}
}

func benchPhase(b *testing.B, dir string, worktree bool) {
	ctx := context.Background()
	var gaffer, native, gSetup, nSetup, gCPU time.Duration
	var nCPU cpuClock
	// In place, one Repo serves every phase, as the workflow's
	// (nodes.Repos) does for a run; a run's own work tree is new.
	inPlace, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	iter, tag := 0, "inplace-"
	if worktree {
		tag = "worktree-"
	}
	for b.Loop() {
		iter++
		// gaffer
		c0 := selfCPU()
		t0 := time.Now()
		root := dir
		var main *Repo
		if worktree {
			var err error
			if main, err = Open(dir); err != nil {
				b.Fatal(err)
			}
			root = filepath.Join(filepath.Dir(dir), "wt-gaffer")
			if _, err := main.AddWorkTree(ctx, root, fmt.Sprintf("gaffer-%d", iter), "HEAD"); err != nil {
				b.Fatal(err)
			}
			gSetup += time.Since(t0)
		}
		r := inPlace
		if worktree {
			var err error
			if r, err = Open(root); err != nil {
				b.Fatal(err)
			}
		}
		gafferPhase(b, ctx, r, tag+"gaffer", iter)
		if worktree {
			if err := main.RemoveWorkTree(ctx, root); err != nil {
				b.Fatal(err)
			}
		}
		gaffer += time.Since(t0)
		gCPU += selfCPU() - c0

		// native git
		t0 = time.Now()
		root = dir
		if worktree {
			root = filepath.Join(filepath.Dir(dir), "wt-native")
			nCPU.git(b, dir, "worktree", "add", "-q", "-b", fmt.Sprintf("native-%d", iter), root, "HEAD")
			nSetup += time.Since(t0)
		}
		nativePhase(b, &nCPU, root, tag+"native", iter)
		if worktree {
			nCPU.git(b, dir, "worktree", "remove", "--force", root)
		}
		native += time.Since(t0)
	}
	n := float64(iter)
	b.ReportMetric(float64(gaffer.Milliseconds())/n, "gaffer-ms/op")
	b.ReportMetric(float64(native.Milliseconds())/n, "native-ms/op")
	b.ReportMetric(float64(gaffer)/float64(native), "x-native")
	if nCPU.used > 0 && gCPU > 0 {
		b.ReportMetric(float64(gCPU)/float64(nCPU.used), "cpu-x-native")
	}
	if worktree {
		b.ReportMetric(float64(gSetup.Milliseconds())/n, "setup-ms/op")
		b.ReportMetric(float64(nSetup.Milliseconds())/n, "native-setup-ms/op")
		b.ReportMetric(float64(gSetup)/float64(nSetup), "setup-x-native")
	}
}

// benchExecDir is the run's execution directory in the benchmark, which
// the workflow's checks leave out.
const benchExecDir = ".gaffer/run-1"

// agentChange is what the agent does in a phase: a new file and an edit.
func agentChange(b *testing.B, root, who string, iter int) {
	b.Helper()
	writeBench(b, filepath.Join(root, "pkg00", "mod000", who+fmt.Sprint(iter)+".go"), fmt.Sprintf("package mod\n\n// %s %d\n", who, iter))
	p := filepath.Join(root, "pkg00", "mod001", "sub0", "f0.go")
	old, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	writeBench(b, p, string(old)+fmt.Sprintf("// %s %d\n", who, iter))
}

// gafferPhase is the workflow's git work for one phase (see
// BenchmarkPhaseOverhead).
func gafferPhase(b *testing.B, ctx context.Context, r *Repo, who string, iter int) {
	b.Helper()
	keep := []string{benchExecDir}
	if _, err := r.Head(ctx); err != nil {
		b.Fatal(err)
	}
	untracked, err := r.UntrackedOutside(ctx, keep)
	if err != nil {
		b.Fatal(err)
	}
	keep = append(untracked, benchExecDir)
	st, err := r.StatusOutside(ctx, keep)
	if err != nil {
		b.Fatal(err)
	}
	if !st.IsClean() {
		b.Fatalf("tree not clean before the phase:\n%s", st)
	}
	agentChange(b, r.Root(), who, iter)
	for _, store := range []bool{true, false} {
		st, err := r.StatusOutside(ctx, keep)
		if err != nil {
			b.Fatal(err)
		}
		paths := append(append(append([]string(nil), st.Modified...), st.Added...), st.Untracked...)
		if len(paths) != 2 {
			b.Fatalf("the phase changed %v, want 2 files", paths)
		}
		if _, err := r.Fingerprint(ctx, paths, store); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.Head(ctx); err != nil {
		b.Fatal(err)
	}
	if _, _, err := r.FindCommit(ctx, "HEAD", HasTrailers(Trailer{Key: "Gaffer-Phase", Value: fmt.Sprint(iter)}), 1); err != nil {
		b.Fatal(err)
	}
	if _, err := r.Commit(ctx, "phase", []Trailer{{Key: "Gaffer-Phase", Value: fmt.Sprint(iter)}},
		CommitOptions{Exclude: keep, AllowEmpty: true, Author: Signature{"b", "b@example.com"}}); err != nil {
		b.Fatal(err)
	}
}

// nativePhase is the same work done by the git binary.
func nativePhase(b *testing.B, c *cpuClock, root, who string, iter int) {
	b.Helper()
	c.git(b, root, "rev-parse", "HEAD")
	spec := []string{"--", ".", ":!" + benchExecDir}
	for _, p := range porcelainPaths(c.git(b, root, append([]string{"status", "--porcelain", "-uall"}, spec...)...)) {
		spec = append(spec, ":!"+p) // the user's untracked files
	}
	status := append([]string{"status", "--porcelain", "-uall"}, spec...)
	if out := c.git(b, root, status...); out != "" {
		b.Fatalf("tree not clean before the phase:\n%s", out)
	}
	agentChange(b, root, who, iter)
	for _, w := range []bool{true, false} {
		paths := porcelainPaths(c.git(b, root, status...))
		if len(paths) != 2 {
			b.Fatalf("the phase changed %v, want 2 files", paths)
		}
		args := []string{"hash-object"}
		if w {
			args = append(args, "-w")
		}
		c.git(b, root, append(append(args, "--"), paths...)...)
	}
	c.git(b, root, append([]string{"add", "-A"}, spec...)...)
	c.git(b, root, "commit", "-q", "--allow-empty", "-m", "phase\n\nGaffer-Phase: "+fmt.Sprint(iter))
}

func porcelainPaths(out string) []string {
	var paths []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if len(l) > 3 {
			paths = append(paths, l[3:])
		}
	}
	return paths
}

// cpuClock adds up the CPU time of the git processes it runs.
type cpuClock struct{ used time.Duration }

func (c *cpuClock) git(b *testing.B, dir string, args ...string) string {
	b.Helper()
	return runBenchGit(b, c, dir, args...)
}

func benchGit(b *testing.B, dir string, args ...string) string {
	b.Helper()
	return runBenchGit(b, nil, dir, args...)
}

func runBenchGit(b *testing.B, c *cpuClock, dir string, args ...string) string {
	b.Helper()
	// No automatic gc: one detached in the background would race the
	// temporary directory's removal and the next iteration's work.
	full := append([]string{"-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "gc.auto=0", "-C", dir}, args...)
	cmd := exec.Command("git", full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	if c != nil {
		c.used += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return out.String()
}

func writeBench(b *testing.B, p, content string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

// genRepo makes dir a committed repository of n files in a source tree's
// shape: pkgNN/modNNN/subN directories of about twenty files each, most
// of them a few kilobytes, one in 2,000 a binary of a megabyte, one in
// 200 executable, a few symbolic links, a .gitignore whose build/ output
// is there but ignored, and a user's untracked notes file. The same n
// gives the same repository.
func genRepo(b *testing.B, dir string, n int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 22))
	const perDir, subs, mods = 20, 5, 10
	line := []byte("\tif err := doSomething(ctx, value); err != nil { return fmt.Errorf(\"step: %w\", err) }\n")
	for i := range n {
		d := i / perDir
		rel := fmt.Sprintf("pkg%02d/mod%03d/sub%d/f%d.go", d/(subs*mods), (d/subs)%mods+d/(subs*mods)*mods, d%subs, i%perDir)
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		var data []byte
		switch {
		case i%2000 == 1999:
			data = make([]byte, 1<<20)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
		default:
			data = append([]byte(fmt.Sprintf("package mod\n\n// file %d\n", i)), bytes.Repeat(line, 1+rng.IntN(60))...)
		}
		mode := os.FileMode(0o644)
		if i%200 == 7 {
			mode = 0o755
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 3 {
			if err := os.Symlink("f0.go", filepath.Join(filepath.Dir(p), "link.go")); err != nil {
				b.Fatal(err)
			}
		}
	}
	writeBench(b, filepath.Join(dir, ".gitignore"), "build/\n*.o\n")
	for i := range 50 {
		writeBench(b, filepath.Join(dir, "build", fmt.Sprintf("out%d.o", i)), "object\n")
	}
	benchGit(b, dir, "init", "-q", "-b", "main")
	benchGit(b, dir, "add", "-A")
	benchGit(b, dir, "commit", "-q", "-m", "base")
	writeBench(b, filepath.Join(dir, "notes.txt"), "the user's notes\n")
	writeBench(b, filepath.Join(dir, filepath.FromSlash(benchExecDir), "plan.md"), "# plan\n")
}

// BenchmarkLaneTree measures a lane's work tree on a generated repository
// of 10k files: AddLaneTree beside `git worktree add --detach` at the same
// commit (setup-x-native, the goal ≤ 1.2), and RemoveLaneTree beside `git
// worktree remove --force` (remove-x-native). The two sides alternate
// within an iteration, so a loaded machine slows both alike.
//
//	go test -run '^$' -bench LaneTree -benchtime 5x ./workspace
func BenchmarkLaneTree(b *testing.B) {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "repo")
	genRepo(b, dir, 10000)
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	head, err := r.Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var gAdd, nAdd, gRm, nRm time.Duration
	for b.Loop() {
		lane := filepath.Join(r.LaneTrees(), "bench", "lane")
		t0 := time.Now()
		if _, err := r.AddLaneTree(ctx, lane, head); err != nil {
			b.Fatal(err)
		}
		gAdd += time.Since(t0)
		native := filepath.Join(filepath.Dir(dir), "native-lane")
		t0 = time.Now()
		benchGit(b, dir, "worktree", "add", "-q", "--detach", native, head)
		nAdd += time.Since(t0)
		t0 = time.Now()
		if err := r.RemoveLaneTree(ctx, lane); err != nil {
			b.Fatal(err)
		}
		gRm += time.Since(t0)
		t0 = time.Now()
		benchGit(b, dir, "worktree", "remove", "--force", native)
		nRm += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(gAdd.Milliseconds())/n, "setup-ms/op")
	b.ReportMetric(float64(nAdd.Milliseconds())/n, "native-setup-ms/op")
	b.ReportMetric(float64(gAdd)/float64(nAdd), "setup-x-native")
	b.ReportMetric(float64(gRm)/float64(nRm), "remove-x-native")
}
