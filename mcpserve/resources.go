package mcpserve

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/runview"
	"github.com/gaffer-dev/gaffer/state"
)

// resourcePrefix starts every resource's URI: gaffer://runs/{id}/….
const resourcePrefix = "gaffer://runs/"

// storySection heads the story so far in a phase's summary.md (as
// package nodes writes it).
const storySection = "## Story so far"

// addResources adds the runs' resource templates.
func (s *Server) addResources() {
	for _, r := range []struct{ uri, name, desc, mime string }{
		{"gaffer://runs/{id}/plan", "plan", "The run's plan as written (markdown): what its approval approves.", "text/markdown"},
		{"gaffer://runs/{id}/story", "story", "The run's Task Story so far: the decisions, methods and requirements its phases recorded, as the last committed phase's summary has it.", "text/markdown"},
		{"gaffer://runs/{id}/diff", "diff", "The unified diff of every phase the run committed, without the execution directory (at most 1 MiB, and says when cut).", "text/x-diff"},
		{"gaffer://runs/{id}/summary/{phase}", "summary", "Phase N's summary.md: its tasks, the files it changed, how to restore it, the story so far.", "text/markdown"},
		{"gaffer://runs/{id}/records/{phase}", "records", "Phase N's full Task Story records, every session's and review's decision record in order: what the compressed story left out (seed 004's escape hatch; the text of gaffer story show --phase N).", "text/plain"},
	} {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: r.uri, Name: r.name, Description: r.desc, MIMEType: r.mime}, s.readResource)
	}
}

// resourceRef is a resource URI read: the run, what of it, and the phase
// for a summary.
type resourceRef struct {
	RunID string
	What  string // plan, story, diff, summary, records
	Phase int
}

// parseResource reads uri as one of the runs' resources.
func parseResource(uri string) (resourceRef, error) {
	rest, ok := strings.CutPrefix(uri, resourcePrefix)
	parts := strings.Split(rest, "/")
	bad := fmt.Errorf("resource %s: want gaffer://runs/RUN/plan, …/story, …/diff, …/summary/PHASE or …/records/PHASE", uri)
	if !ok || len(parts) < 2 || parts[0] == "" {
		return resourceRef{}, bad
	}
	ref := resourceRef{RunID: parts[0], What: parts[1]}
	switch {
	case (ref.What == "summary" || ref.What == "records") && len(parts) == 3:
		n, err := strconv.Atoi(parts[2])
		if err != nil || n < 1 {
			return resourceRef{}, fmt.Errorf("resource %s: the phase is a number from 1", uri)
		}
		ref.Phase = n
	case len(parts) == 2 && (ref.What == "plan" || ref.What == "story" || ref.What == "diff"):
	default:
		return resourceRef{}, bad
	}
	return ref, checkRunID(ref.RunID)
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	ref, err := parseResource(uri)
	if err != nil {
		return nil, err
	}
	text, mime, err := s.resourceText(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
}

// resourceText is the text of ref and its MIME type.
func (s *Server) resourceText(ctx context.Context, ref resourceRef) (string, string, error) {
	if ref.What == "diff" {
		w := &capped{max: maxMaxBytes}
		if err := s.cfg.Backend.Diff(ctx, ref.RunID, 0, w); err != nil {
			return "", "", err
		}
		b := w.bounded()
		if b.Truncated {
			b.Text += "\n# " + b.Note + "\n"
		}
		return b.Text, "text/x-diff", nil
	}
	if ref.What == "records" {
		w := &capped{max: maxMaxBytes}
		if err := s.cfg.Backend.Records(ctx, ref.RunID, ref.Phase, w); err != nil {
			return "", "", err
		}
		b := w.bounded()
		if b.Truncated {
			b.Text += fmt.Sprintf("\n[cut: the first %d of %d bytes; gaffer story show %s --phase %d prints them all]\n", b.Bytes, b.TotalBytes, ref.RunID, ref.Phase)
		}
		return b.Text, "text/plain", nil
	}
	rs, err := s.cfg.Backend.Status(ctx, ref.RunID)
	if err != nil {
		return "", "", err
	}
	st := rs.Snapshot.State
	switch ref.What {
	case "plan":
		p := runview.PlanOf(st)
		if p == nil {
			return "", "", fmt.Errorf("run %s has no plan yet (%s): the architect is writing it", ref.RunID, rs.Status)
		}
		return p.Markdown, "text/markdown", nil
	case "summary":
		b, err := s.summary(ctx, st, ref.Phase)
		return string(b), "text/markdown", err
	}
	// The story: the last committed phase's summary has it.
	for n := len(st.Progress.Phases); n > 0; n-- {
		if st.Progress.Phases[n-1].PostCommit == "" {
			continue
		}
		b, err := s.summary(ctx, st, n)
		if err != nil {
			return "", "", err
		}
		return storyOf(string(b), n), "text/markdown", nil
	}
	return "", "", fmt.Errorf("run %s has committed no phase yet (%s): its story starts with phase 1's commit", ref.RunID, rs.Status)
}

// summary is phase n's summary.md as the run's work has it: the
// summary names the phase's commit, so a later commit holds it (the next
// phase's, or the run's last): the tip of the run's branch, or for a run
// in place the last phase commit.
func (s *Server) summary(ctx context.Context, st state.ExecutionState, n int) ([]byte, error) {
	phases := st.Progress.Phases
	if n > len(phases) {
		return nil, fmt.Errorf("run %s has %d phases, not %d", st.Run.ID, len(phases), n)
	}
	ps := phases[n-1]
	if ps.PostCommit == "" {
		return nil, fmt.Errorf("phase %d of run %s has no commit yet (%s, attempt %d)", n, st.Run.ID, ps.Status, ps.Attempt)
	}
	p := path.Join(st.Run.ExecDir, fmt.Sprintf("phase-%d", n), "summary.md")
	revs := []string{}
	if st.Run.WorkTree != "" {
		revs = append(revs, "refs/heads/"+host.RunBranch(st.Run.ID))
	}
	for i := len(phases) - 1; i >= n-1; i-- {
		if c := phases[i].PostCommit; c != "" {
			revs = append(revs, c)
		}
	}
	for _, rev := range revs {
		b, ok, err := s.cfg.Backend.FileAt(ctx, rev, p)
		if err == nil && ok {
			return b, nil
		}
	}
	return nil, fmt.Errorf("phase %d of run %s: no commit of its work has %s yet (it is written once the phase is committed)", n, st.Run.ID, p)
}

// storyOf is the story so far section of phase n's summary, or a line
// saying it has none.
func storyOf(summary string, n int) string {
	_, after, ok := strings.Cut(summary, storySection)
	if !ok {
		return fmt.Sprintf("%s\n\n(phase %d's summary records no story: its agents reported no decisions)\n", storySection, n)
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i+1]
	}
	return storySection + after
}
