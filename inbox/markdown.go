package inbox

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders plans: CommonMark with GitHub's tables, strikethrough,
// task lists and autolinks. It is goldmark's safe mode (no
// html.WithUnsafe): raw HTML in the source is left out, and a link or
// image to a javascript:, vbscript:, file: or data: URL (but data:image)
// gets an empty address, which renderMarkdown then takes away: such a link
// is text, not a link. The page's content security policy blocks any
// image from elsewhere.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// renderMarkdown is src as sanitised HTML, or src escaped in a <pre> if
// goldmark fails (it does not on a string).
func renderMarkdown(src string) template.HTML {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(src), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	out := strings.ReplaceAll(b.String(), `<a href="">`, `<a>`)
	out = strings.ReplaceAll(out, `<img src="" `, `<img `)
	return template.HTML(out) //nolint:gosec // goldmark's safe mode escapes text and drops raw HTML
}
