package inbox

import (
	"html/template"
	"strings"

	"github.com/gaffer-dev/gaffer/runview"
)

// parseTemplates parses the embedded pages, with the phase tree's marks
// and words from runview (the ones the command line draws).
func parseTemplates() (*template.Template, error) {
	funcs := template.FuncMap{
		"mark": runview.Mark,
		"word": runview.StatusWord,
		"kind": runview.Kind,
		"join": strings.Join,
	}
	return template.New("inbox").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
}
