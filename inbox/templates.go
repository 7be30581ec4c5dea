package inbox

import (
	"html/template"
	"strings"

	"github.com/gaffer-dev/gaffer/internal/render"
	"github.com/gaffer-dev/gaffer/runview"
)

// parseTemplates parses the embedded pages. The phase tree's marks and
// words are runview's (Phase.Mark, Phase.Word: the ones the command line
// draws).
func parseTemplates() (*template.Template, error) {
	funcs := template.FuncMap{
		"kind":  runview.Kind,
		"join":  strings.Join,
		"short": short,
	}
	return template.New("inbox").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
}

// maxReviewText is how much of a review's comments a phase card shows.
const maxReviewText = 600

// short is s cut at about maxReviewText bytes, on a rune boundary, with
// "…" when cut: a phase card shows the gist of a review, the transcript
// the rest.
func short(s string) string {
	s, cut := render.Clip(strings.TrimSpace(s), maxReviewText)
	if !cut {
		return s
	}
	return strings.TrimSpace(s) + " …"
}
