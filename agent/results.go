package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gaffer-dev/gaffer/agent/internal/short"
)

// Disposition is the evaluator's verdict on one review item.
type Disposition string

// The dispositions of a review item.
const (
	DispositionImplement Disposition = "IMPLEMENT" // act on it in the retry
	DispositionReject    Disposition = "REJECT"    // the reviewer is wrong; ignore it
	DispositionDefer     Disposition = "DEFER"     // valid but out of scope; log it
)

// Valid reports whether d is one of the three dispositions.
func (d Disposition) Valid() bool {
	return d == DispositionImplement || d == DispositionReject || d == DispositionDefer
}

// Review is a reviewer's verdict on a phase.
type Review struct {
	Approved bool         `json:"approved"`
	Comments string       `json:"comments"`
	Items    []ReviewItem `json:"items,omitempty"`
	// Tasks are the ids of the plan's tasks a rejection is about, when
	// the reviewer names them: in a phase of several lanes only theirs
	// run again. None: the whole phase.
	Tasks []string `json:"tasks,omitempty"`
}

// ReviewItem is one point of a review. The reviewer may leave Disposition
// empty; the evaluator (or the workflow) fills it in.
type ReviewItem struct {
	Text        string      `json:"text" yaml:"text"`
	Disposition Disposition `json:"disposition,omitempty" yaml:"disposition,omitempty"`
	Reason      string      `json:"reason,omitempty" yaml:"reason,omitempty"`
}

// Evaluation is the evaluator's sorting of review items.
type Evaluation struct {
	Items []ReviewItem `json:"items"`
}

// JSON returns r as the JSON object ParseReview reads.
func (r Review) JSON() string { return mustJSON(r) }

// JSON returns e as the JSON object ParseEvaluation reads.
func (e Evaluation) JSON() string {
	if e.Items == nil {
		e.Items = []ReviewItem{}
	}
	return mustJSON(e)
}

// mustJSON marshals a value made only of strings, bools and slices of them,
// which cannot fail.
func mustJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("{%q: %q}", "error", err.Error())
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// ParseReview reads a reviewer's output: a JSON object
//
//	{"approved": bool, "comments": "...", "items": [{"text": "...", "disposition": "IMPLEMENT|REJECT|DEFER", "reason": "..."}]}
//
// possibly inside a ```json fence or with prose around it. The first JSON
// object with an "approved" field is used. "approved" is required and must be
// a boolean; "comments" a string; "items" an array of objects whose "text" is
// a non-empty string. Dispositions may be left out, and are read
// case-insensitively. Other fields are ignored. Errors match ErrNoJSON or
// ErrInvalidResult.
func ParseReview(output string) (Review, error) {
	obj, err := findObject(output, "approved")
	if err != nil {
		return Review{}, err
	}
	var r Review
	if err := decodeField(obj, "approved", &r.Approved, true, "a boolean"); err != nil {
		return Review{}, err
	}
	if err := decodeField(obj, "comments", &r.Comments, false, "a string"); err != nil {
		return Review{}, err
	}
	if r.Items, err = decodeItems(obj, false); err != nil {
		return Review{}, err
	}
	if err := decodeField(obj, "tasks", &r.Tasks, false, "a list of task ids"); err != nil {
		return Review{}, err
	}
	return r, nil
}

// ParseEvaluation reads an evaluator's output: a JSON object
// {"items": [{"text": "...", "disposition": "IMPLEMENT|REJECT|DEFER", "reason": "..."}]}
// found as ParseReview finds its object. Every item needs a disposition.
func ParseEvaluation(output string) (Evaluation, error) {
	obj, err := findObject(output, "items")
	if err != nil {
		return Evaluation{}, err
	}
	if _, ok := obj["items"]; !ok {
		return Evaluation{}, fmt.Errorf("%w: the JSON object has no \"items\" field", ErrInvalidResult)
	}
	items, err := decodeItems(obj, true)
	if err != nil {
		return Evaluation{}, err
	}
	return Evaluation{Items: items}, nil
}

// maxCandidates bounds how many '{' positions findObject tries, so that
// output full of braces costs linear time times a constant.
const maxCandidates = 256

// findObject returns the first JSON object in s that has the field key, or
// failing that the first JSON object at all, so the caller can name the
// missing field.
func findObject(s, key string) (map[string]json.RawMessage, error) {
	var first map[string]json.RawMessage
	var lastErr error
	tried := 0
	for i := 0; i < len(s) && tried < maxCandidates; i++ {
		if s[i] != '{' {
			continue
		}
		tried++
		end, ok := balancedEnd(s, i)
		if !ok {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s[i:end]), &obj); err != nil {
			lastErr = err
			continue
		}
		if _, ok := obj[key]; ok {
			return obj, nil
		}
		if first == nil {
			first = obj
		}
	}
	switch {
	case first != nil:
		return first, nil
	case lastErr != nil:
		return nil, fmt.Errorf("%w (the nearest candidate: %v)", ErrNoJSON, lastErr)
	}
	return nil, ErrNoJSON
}

// balancedEnd returns the index just past the '}' that closes the '{' at
// s[start], skipping braces inside JSON strings.
func balancedEnd(s string, start int) (int, bool) {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// decodeField decodes obj[name] into dst (a *bool or *string). A missing or
// null field is an error only when required.
func decodeField(obj map[string]json.RawMessage, name string, dst any, required bool, want string) error {
	raw, ok := obj[name]
	if !ok || isNull(raw) {
		if required {
			return fmt.Errorf("%w: %q is required and must be %s", ErrInvalidResult, name, want)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %q must be %s, got %s", ErrInvalidResult, name, want, short.Clip(string(raw)))
	}
	return nil
}

// decodeItems decodes obj["items"]; needDisposition makes the disposition
// required.
func decodeItems(obj map[string]json.RawMessage, needDisposition bool) ([]ReviewItem, error) {
	raw, ok := obj["items"]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%w: \"items\" must be an array, got %s", ErrInvalidResult, short.Clip(string(raw)))
	}
	items := make([]ReviewItem, 0, len(elems))
	for i, e := range elems {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(e, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("%w: items[%d] must be an object, got %s", ErrInvalidResult, i, short.Clip(string(e)))
		}
		var it ReviewItem
		var disp string
		for _, f := range []struct {
			name     string
			dst      *string
			required bool
		}{{"text", &it.Text, true}, {"disposition", &disp, needDisposition}, {"reason", &it.Reason, false}} {
			if err := decodeField(fields, f.name, f.dst, f.required, "a string"); err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		if strings.TrimSpace(it.Text) == "" {
			return nil, fmt.Errorf("items[%d]: %w: \"text\" is empty", i, ErrInvalidResult)
		}
		d, err := ParseDisposition(disp)
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		if d == "" && needDisposition {
			return nil, fmt.Errorf("items[%d]: %w: \"disposition\" is required", i, ErrInvalidResult)
		}
		it.Disposition = d
		items = append(items, it)
	}
	return items, nil
}

// ParseDisposition reads a disposition case-insensitively; "" stays "".
func ParseDisposition(s string) (Disposition, error) {
	d := Disposition(strings.ToUpper(strings.TrimSpace(s)))
	if d == "" || d.Valid() {
		return d, nil
	}
	return "", fmt.Errorf("%w: disposition %q is not IMPLEMENT, REJECT or DEFER", ErrInvalidResult, s)
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// ExtractPlan returns an architect's plan markdown from its output: the
// output trimmed, and unwrapped when the whole of it is one fenced block
// marked markdown or md (or unmarked, with no other fence inside).
func ExtractPlan(output string) string {
	s := strings.TrimSpace(output)
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasPrefix(first, "```") {
		return s
	}
	info := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(first, "```")))
	if info != "" && info != "markdown" && info != "md" {
		return s
	}
	body, last, ok := cutLast(rest, "\n")
	if !ok || strings.TrimSpace(last) != "```" {
		if strings.TrimSpace(rest) == "```" {
			return ""
		}
		return s
	}
	if info == "" && hasFence(body) {
		return s
	}
	return strings.TrimSpace(body)
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return "", s, false
	}
	return s[:i], s[i+len(sep):], true
}

// hasFence reports whether any line of s opens or closes a fenced block.
func hasFence(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			return true
		}
	}
	return false
}
