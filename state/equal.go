package state

import (
	"maps"
	"slices"
)

// Equal reports whether p and o are the same plan, field by field: what
// encodes to the same JSON. It allocates nothing, so a codec can tell an
// unchanged plan from a changed one at every step without encoding it.
func (p Plan) Equal(o Plan) bool {
	return p.Markdown == o.Markdown && p.Preamble == o.Preamble && p.Mode == o.Mode && p.Whole == o.Whole &&
		slices.EqualFunc(p.Tasks, o.Tasks, Task.Equal) && slices.EqualFunc(p.Phases, o.Phases, Phase.Equal) &&
		(p.Tasks == nil) == (o.Tasks == nil) && (p.Phases == nil) == (o.Phases == nil)
}

// Equal reports whether t and o are the same task, field by field.
func (t Task) Equal(o Task) bool {
	return t.ID == o.ID && t.Title == o.Title && t.Type == o.Type && t.Description == o.Description &&
		t.Line == o.Line && t.EndLine == o.EndLine &&
		sameStrings(t.DependsOn, o.DependsOn) && sameStrings(t.Files, o.Files)
}

// Equal reports whether p and o are the same phase, field by field.
func (p Phase) Equal(o Phase) bool {
	return p.Index == o.Index && sameStrings(p.TaskIDs, o.TaskIDs)
}

// Equal reports whether p and o are the same phase state, field by field
// (times compared with ==, location included, as their JSON differs by
// it): what encodes to the same JSON. It allocates nothing.
func (p PhaseState) Equal(o PhaseState) bool {
	return p.Index == o.Index && p.Status == o.Status && p.Attempt == o.Attempt &&
		p.StartedAt == o.StartedAt && p.CompletedAt == o.CompletedAt &&
		p.Error == o.Error && p.ErrorKind == o.ErrorKind && p.PreCommit == o.PreCommit && p.PostCommit == o.PostCommit &&
		sameStrings(p.Untracked, o.Untracked) && sameMap(p.Written, o.Written) && sameMap(p.GitSettings, o.GitSettings) &&
		p.SummaryPath == o.SummaryPath && p.Summary == o.Summary &&
		(p.Review == nil) == (o.Review == nil) && (p.Review == nil || p.Review.Equal(*o.Review)) &&
		slices.EqualFunc(p.Rejections, o.Rejections, Rejection.Equal) && (p.Rejections == nil) == (o.Rejections == nil) &&
		slices.Equal(p.Tasks, o.Tasks) && (p.Tasks == nil) == (o.Tasks == nil) &&
		slices.EqualFunc(p.Lanes, o.Lanes, LaneProgress.Equal) && (p.Lanes == nil) == (o.Lanes == nil) &&
		(p.Kept == nil) == (o.Kept == nil) && (p.Kept == nil || *p.Kept == *o.Kept)
}

// Equal reports whether r and o are the same review, field by field.
func (r ReviewResult) Equal(o ReviewResult) bool {
	return r.Approved == o.Approved && r.Comments == o.Comments &&
		slices.Equal(r.Items, o.Items) && (r.Items == nil) == (o.Items == nil) && sameStrings(r.Tasks, o.Tasks)
}

// Equal reports whether r and o are the same rejection, field by field.
func (r Rejection) Equal(o Rejection) bool {
	return r.Attempt == o.Attempt && r.Iteration == o.Iteration && r.Review.Equal(o.Review)
}

// sameStrings is slices.Equal that also tells nil from empty, which
// encode differently ("null" and "[]") where a field is not omitempty.
func sameStrings(a, b []string) bool {
	return slices.Equal(a, b) && (a == nil) == (b == nil)
}

// sameMap is maps.Equal that also tells nil from empty.
func sameMap(a, b map[string]string) bool {
	return maps.Equal(a, b) && (a == nil) == (b == nil)
}
