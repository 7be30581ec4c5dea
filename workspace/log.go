package workspace

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitInfo is one commit of a log: its hash, subject (the message's first
// line), trailers, author and author time.
type CommitInfo struct {
	Hash     string
	Subject  string
	Trailers []Trailer
	Author   Signature
	When     time.Time
}

func commitInfo(c *object.Commit) CommitInfo {
	subject, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n")
	return CommitInfo{
		Hash:     c.Hash.String(),
		Subject:  strings.TrimSpace(subject),
		Trailers: ParseTrailers(c.Message),
		Author:   Signature{Name: c.Author.Name, Email: c.Author.Email},
		When:     c.Author.When,
	}
}

// walk calls fn for the commits reachable from rev, newest first by
// committer time (the order of `git log`), until fn returns false, limit
// commits were seen (limit <= 0: no limit) or the history ends. An unborn
// HEAD has no commits to walk.
func (r *Repo) walk(ctx context.Context, rev string, limit int, fn func(*object.Commit) bool) error {
	c, err := r.resolve(rev)
	if errors.Is(err, ErrNoCommits) {
		return nil
	}
	if err != nil {
		return err
	}
	it, err := r.repo.Log(&git.LogOptions{From: c.Hash, Order: git.LogOrderCommitterTime})
	if err != nil {
		return &Error{Op: "log", Path: rev, Err: err}
	}
	defer it.Close()
	for n := 0; limit <= 0 || n < limit; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &Error{Op: "log", Path: rev, Err: err}
		}
		if !fn(c) {
			return nil
		}
	}
	return nil
}

// Log returns the last n commits reachable from HEAD (all of them when
// n <= 0), newest first. On a branch with no commits it returns none.
func (r *Repo) Log(ctx context.Context, n int) ([]CommitInfo, error) {
	return r.LogFrom(ctx, "HEAD", n)
}

// LogFrom is Log from the revision rev (a hash, a branch, a ref) instead
// of HEAD.
func (r *Repo) LogFrom(ctx context.Context, rev string, n int) ([]CommitInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return retry(r, func() ([]CommitInfo, error) {
		var out []CommitInfo
		err := r.walk(ctx, rev, n, func(c *object.Commit) bool {
			out = append(out, commitInfo(c))
			return true
		})
		return out, err
	})
}

// FindCommit walks back from the revision from (HEAD, a hash, a branch),
// newest first, through at most limit commits (no limit when limit <= 0)
// and returns the first one for which match returns true, given its full
// message and its trailers. found is false when none matches; on a branch
// with no commits, from = "HEAD" finds nothing rather than failing.
func (r *Repo) FindCommit(ctx context.Context, from string, match func(msg string, trailers []Trailer) bool, limit int) (hash string, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	hash, err = retry(r, func() (string, error) {
		var h string
		err := r.walk(ctx, from, limit, func(c *object.Commit) bool {
			if match(c.Message, ParseTrailers(c.Message)) {
				h = c.Hash.String()
				return false
			}
			return true
		})
		return h, err
	})
	if err != nil {
		return "", false, err
	}
	return hash, hash != "", nil
}

// HasTrailers returns a FindCommit matcher for the commits whose trailers
// include every one of want (keys compared without regard to case, values
// exactly).
func HasTrailers(want ...Trailer) func(msg string, trailers []Trailer) bool {
	return func(_ string, trailers []Trailer) bool {
		for _, w := range want {
			ok := false
			for _, t := range trailers {
				if strings.EqualFold(t.Key, w.Key) && t.Value == w.Value {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
}
