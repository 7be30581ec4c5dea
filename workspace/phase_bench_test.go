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

// The phase's git work is measured on the binary itself, against the
// least native git that gives the same commits: cli's
// BenchmarkPhaseOverhead. BenchmarkLaneTree measures a lane's work tree
// here.

func benchGit(b *testing.B, dir string, args ...string) string {
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
