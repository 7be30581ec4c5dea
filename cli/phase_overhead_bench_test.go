package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPhaseOverhead times the gaffer binary's own git work on a
// generated repository of 10k files against the least native git that
// gives the same commits, and reports their ratio (x-native; the goal ≤
// 1.5). The binary is timed from outside, whole runs in place, and its
// own work is what a run on the 10k-file repository costs above the same
// run on a repository of the few files the agents change: the process
// start, the store, the agents and the execution directory cost the same
// on both and cancel out. Native git is timed the same way, the same
// edits made in the same order, so only what grows with the repository
// is compared:
//
//   - phases: three phases of one task each; the agent writes a new file
//     and changes another. Native, per phase: `git status`, `git add -A`,
//     `git commit`.
//
// Both sides end with the run's record commit (the execution directory's
// final state): native, one more `git add -A` and `git commit`.
//   - lanes: one phase of three lanes, each writing its own new file and
//     changing another. Native, per lane: `git worktree add`, `git add
//     -A` and `git commit` in it, `git cherry-pick -n` (the merge) into the
//     checkout, `git worktree remove`; then one `git status` and `git
//     commit`.
//
// gaffer runs the lanes one after another (--parallel 1), as the native
// side does: per-lane work is compared, not concurrency. The sides
// alternate within an iteration, so a loaded machine slows both alike;
// gaffer-ms and native-ms are the differences of wall time (10k files
// minus few), per run, and cpu-x-native the ratio of the same differences
// of CPU time (user and system, of the processes and their git
// children), which a loaded machine disturbs less.
//
//	go test -run '^$' -bench PhaseOverhead -benchtime 3x -timeout 60m ./cli
func BenchmarkPhaseOverhead(b *testing.B) {
	bin := buildGafferB(b)
	root := b.TempDir()
	repos := map[string]string{}
	for _, side := range []string{"gaffer", "native"} {
		for _, n := range []int{10000, 0} {
			dir := filepath.Join(root, fmt.Sprintf("%s-%d", side, n))
			genBenchRepo(b, dir, n)
			repos[fmt.Sprintf("%s-%d", side, n)] = dir
		}
	}
	in := b.TempDir()
	iter := 0
	for _, mode := range []string{"phases", "lanes"} {
		b.Run(mode, func(b *testing.B) {
			var gBig, gSmall, nBig, nSmall cost
			runs := 0
			for b.Loop() {
				iter++
				plan, script := overheadPlan(b, in, mode, iter)
				id := fmt.Sprintf("r-20260101-over%03d", iter)
				gBig = gBig.add(measure(func() { gafferRun(b, bin, repos["gaffer-10000"], plan, script, id) }))
				nBig = nBig.add(measure(func() { nativeRun(b, repos["native-10000"], mode, iter) }))
				gSmall = gSmall.add(measure(func() { gafferRun(b, bin, repos["gaffer-0"], plan, script, id) }))
				nSmall = nSmall.add(measure(func() { nativeRun(b, repos["native-0"], mode, iter) }))
				runs++
			}
			g, n := gBig.sub(gSmall), nBig.sub(nSmall)
			b.ReportMetric(float64(g.wall.Milliseconds())/float64(runs), "gaffer-ms")
			b.ReportMetric(float64(n.wall.Milliseconds())/float64(runs), "native-ms")
			if n.wall > 0 {
				b.ReportMetric(float64(g.wall)/float64(n.wall), "x-native")
			}
			if n.cpu > 0 {
				b.ReportMetric(float64(g.cpu)/float64(n.cpu), "cpu-x-native")
			}
		})
	}
}

// cost is the wall time and the CPU time of the child processes of some
// work.
type cost struct{ wall, cpu time.Duration }

func (c cost) add(o cost) cost { return cost{c.wall + o.wall, c.cpu + o.cpu} }
func (c cost) sub(o cost) cost { return cost{c.wall - o.wall, c.cpu - o.cpu} }

// measure runs f and returns its cost: its wall time, and the CPU time
// (user and system) of the processes it ran and waited for, theirs
// included.
func measure(f func()) cost {
	c0, t0 := childrenCPU(), time.Now()
	f()
	return cost{time.Since(t0), childrenCPU() - c0}
}

func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// overheadChanges are the files the agent of phase (or lane) k of
// iteration iter changes: a new file and one that exists, in two
// directories.
func overheadChanges(k, iter int) (added, changed string) {
	return fmt.Sprintf("pkg%02d/mod%03d/new-%d-%d.go", k, k*10, iter, k), fmt.Sprintf("pkg%02d/mod%03d/sub1/f0.go", k, k*10+1)
}

func overheadContent(k, iter int) string {
	return fmt.Sprintf("package mod\n\n// iteration %d, part %d\n", iter, k)
}

// overheadPlan writes the plan and script of mode for iteration iter.
func overheadPlan(b *testing.B, dir, mode string, iter int) (plan, script string) {
	b.Helper()
	var p, s strings.Builder
	p.WriteString("# Plan: overhead\n\n")
	s.WriteString("developer:\n")
	for k := 0; k < 3; k++ {
		added, changed := overheadChanges(k, iter)
		if mode == "lanes" {
			fmt.Fprintf(&p, "### Task %d: part %d\n- type: test\n- depends on: none\n- files: %s, %s\n\n", k+1, k, added, changed)
			fmt.Fprintf(&s, "  - phase: 1\n    task: \"%d\"\n", k+1)
		} else {
			fmt.Fprintf(&p, "### Task %d: part %d\n\nChange two files.\n\n", k+1, k)
			fmt.Fprintf(&s, "  - phase: %d\n", k+1)
		}
		content := strings.ReplaceAll(overheadContent(k, iter), "\n", `\n`)
		fmt.Fprintf(&s, "    actions:\n      - write: {path: %s, content: \"%s\"}\n      - write: {path: %s, content: \"%s\"}\n",
			added, content, changed, content)
	}
	plan, script = filepath.Join(dir, fmt.Sprintf("plan-%d.md", iter)), filepath.Join(dir, fmt.Sprintf("script-%d.yaml", iter))
	benchFile(b, plan, p.String())
	benchFile(b, script, s.String())
	return plan, script
}

// gafferRun runs the binary on plan in place in dir, to its end.
func gafferRun(b *testing.B, bin, dir, plan, script, id string) {
	b.Helper()
	benchCmd(b, dir, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--in-place", "--parallel", "1", "--run-id", id)
}

// nativeRun makes the same changes and commits with the least native git
// (see BenchmarkPhaseOverhead).
func nativeRun(b *testing.B, dir, mode string, iter int) {
	b.Helper()
	write := func(root string, k int) {
		added, changed := overheadChanges(k, iter)
		for _, f := range []string{added, changed} {
			p := filepath.Join(root, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			benchFile(b, p, overheadContent(k, iter))
		}
	}
	record := func() {
		benchFile(b, filepath.Join(dir, fmt.Sprintf("record-%d.json", iter)), "{}\n")
		nativeGit(b, dir, "add", "-A")
		nativeGit(b, dir, "commit", "-q", "-m", "record")
	}
	if mode == "phases" {
		for k := 0; k < 3; k++ {
			write(dir, k)
			nativeGit(b, dir, "status", "--porcelain")
			nativeGit(b, dir, "add", "-A")
			nativeGit(b, dir, "commit", "-q", "-m", fmt.Sprintf("phase %d", k+1))
		}
		record()
		return
	}
	var commits []string
	for k := 0; k < 3; k++ {
		lane := filepath.Join(filepath.Dir(dir), fmt.Sprintf("%s-lane%d", filepath.Base(dir), k))
		nativeGit(b, dir, "worktree", "add", "-q", "--detach", lane, "HEAD")
		write(lane, k)
		nativeGit(b, lane, "add", "-A")
		nativeGit(b, lane, "commit", "-q", "-m", fmt.Sprintf("lane %d", k+1))
		commits = append(commits, strings.TrimSpace(nativeGit(b, lane, "rev-parse", "HEAD")))
		nativeGit(b, dir, "worktree", "remove", "--force", lane)
	}
	for _, c := range commits {
		nativeGit(b, dir, "cherry-pick", "-n", c)
	}
	nativeGit(b, dir, "status", "--porcelain")
	nativeGit(b, dir, "commit", "-q", "-m", "phase 1")
	record()
}

func nativeGit(b *testing.B, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// genBenchRepo makes dir a committed repository of n files (at least the
// few the benchmark's agents change) in a source tree's shape: pkgNN/
// modNNN/subN directories of about twenty files each, most a few
// kilobytes, one in 2,000 a binary of a megabyte, one in 200 executable,
// and a .gitignore whose build/ output is there but ignored. The same n
// gives the same repository.
func genBenchRepo(b *testing.B, dir string, n int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 31))
	line := []byte("\tif err := doSomething(ctx, value); err != nil { return fmt.Errorf(\"step: %w\", err) }\n")
	var files []string
	const perDir, subs, mods = 20, 5, 10
	for i := range n {
		d := i / perDir
		files = append(files, fmt.Sprintf("pkg%02d/mod%03d/sub%d/f%d.go", d/(subs*mods), (d/subs)%mods+d/(subs*mods)*mods, d%subs, i%perDir))
	}
	for k := 0; k < 3; k++ {
		if _, changed := overheadChanges(k, 0); !slices.Contains(files, changed) {
			files = append(files, changed)
		}
	}
	for i, rel := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		data := append([]byte(fmt.Sprintf("package mod\n\n// file %d\n", i)), bytes.Repeat(line, 1+rng.IntN(60))...)
		if i%2000 == 1999 {
			data = make([]byte, 1<<20)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
		}
		mode := os.FileMode(0o644)
		if i%200 == 7 {
			mode = 0o755
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			b.Fatal(err)
		}
	}
	benchFile(b, filepath.Join(dir, ".gitignore"), "build/\n*.o\n")
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		benchFile(b, filepath.Join(dir, "build", fmt.Sprintf("out%d.o", i)), "object\n")
	}
	nativeGit(b, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	nativeGit(b, dir, "add", "-A")
	nativeGit(b, dir, "commit", "-q", "-m", "base")
}
