package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	git "github.com/go-git/go-git/v5"
)

// benchRepo is a committed repository of n files in n/50 directories.
func benchRepo(b *testing.B, n int) *Repo {
	b.Helper()
	dir := b.TempDir()
	if _, err := git.PlainInit(dir, false); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/50), fmt.Sprintf("f%d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package d\n\nconst X%d = %d\n", i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Commit(context.Background(), "base", nil, CommitOptions{Author: Signature{"b", "b@b"}}); err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkStatus5000Files(b *testing.B) {
	r := benchRepo(b, 5000)
	ctx := context.Background()
	for b.Loop() {
		if _, err := r.Status(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResetToClean5000Files(b *testing.B) {
	r := benchRepo(b, 5000)
	ctx := context.Background()
	for b.Loop() {
		if err := r.ResetTo(ctx, "HEAD", nil); err != nil {
			b.Fatal(err)
		}
	}
}
