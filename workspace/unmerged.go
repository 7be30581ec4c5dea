package workspace

import (
	"context"
	"strings"
)

// Unmerged returns the local branches under prefix ("gaffer/") that hold
// commits HEAD lacks, by short name: one `git for-each-ref --no-merged`,
// however many branches there are. A repository without commits has
// none.
func (r *Repo) Unmerged(ctx context.Context, prefix string) (map[string]bool, error) {
	if _, err := gitCLI(ctx, r.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return map[string]bool{}, nil
	}
	// The full name, cut here: git's short name checks each ref for an
	// ambiguous one (ten stats a ref: 0.15 s of 10,000 packed refs,
	// against 0.01 s).
	out, err := gitCLI(ctx, r.root, "for-each-ref", "--no-merged=HEAD", "--format=%(refname)", "refs/heads/"+strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, &Error{Op: "branch", Path: prefix, Err: err}
	}
	m := map[string]bool{}
	for _, b := range strings.Split(string(out), "\n") {
		if b, ok := strings.CutPrefix(b, "refs/heads/"); ok {
			m[b] = true
		}
	}
	return m, nil
}
