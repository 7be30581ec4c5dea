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
	out, err := gitCLI(ctx, r.root, "for-each-ref", "--no-merged=HEAD", "--format=%(refname:short)", "refs/heads/"+strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, &Error{Op: "branch", Path: prefix, Err: err}
	}
	m := map[string]bool{}
	for _, b := range strings.Fields(string(out)) {
		m[b] = true
	}
	return m, nil
}
