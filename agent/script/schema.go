package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/agent/internal/short"
	"github.com/gaffer-dev/gaffer/internal/strictyaml"
)

// This file holds the strict half of script loading: a check of a parsed
// YAML (or JSON, converted) node tree against the Script type, before it is
// decoded, by internal/strictyaml, and the wording of what it finds. It
// names unknown keys, wrong types, repeated keys and missing required keys
// with their lines, the same way for both formats. Required keys are marked
// on struct fields with `script:"required"`, or
// `script:"required,unless=OTHER"` when either key will do.

// lineError is an error at a line of the script.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

func errAt(n *yaml.Node, format string, args ...any) error {
	return &lineError{line: n.Line, err: fmt.Errorf(format, args...)}
}

// maxProblems bounds the problems checkSchema reports.
const maxProblems = 20

// maxVisits bounds the values checkSchema looks at, so aliases that expand
// exponentially (a "billion laughs") fail fast instead of running for ever.
const maxVisits = strictyaml.DefaultMaxVisits

// checkSchema checks root against the Script type. It reports every problem
// it finds (up to maxProblems), each a *lineError, joined in the order of
// the file; an alias that contains itself or expands too far stops the
// check where it is found.
func checkSchema(root *yaml.Node) error {
	if root.Kind != yaml.MappingNode {
		return errAt(root, "a script is a mapping with the keys architect, developer, reviewer and evaluator")
	}
	c := strictyaml.Checker{Merge: true, Tag: "script", MaxVisits: maxVisits}
	var problems []error
	for _, p := range c.Check(root, reflect.TypeFor[Script]()) {
		problems = append(problems, &lineError{line: p.Line, err: schemaProblem(p)})
	}
	if len(problems) > maxProblems {
		more := len(problems) - maxProblems
		problems = append(problems[:maxProblems], fmt.Errorf("and %d more problem(s)", more))
	}
	return errors.Join(problems...)
}

// schemaProblem words a problem the check found.
func schemaProblem(p strictyaml.Problem) error {
	label := p.Path
	if label == "" {
		label = "the script"
	}
	where := "at the top level"
	if p.Path != "" {
		where = "in " + p.Path
	}
	switch p.Kind {
	case strictyaml.WrongType:
		switch p.Want.Kind() {
		case reflect.Struct:
			return fmt.Errorf("%s: want a mapping of keys (%s), got %s", label, strings.Join(p.Keys, ", "), describe(p.Node))
		case reflect.Slice:
			return fmt.Errorf("%s: want a list, got %s", label, describe(p.Node))
		}
		return fmt.Errorf("%s: want %s, got %s", label, wantScalar(p.Want), describe(p.Node))
	case strictyaml.NotDecimal:
		return fmt.Errorf("%s: want a whole number in plain decimal digits (no leading 0, 0x, 0o, 0b or _), got %s", label, describe(p.Node))
	case strictyaml.OutOfRange:
		lo, hi := strictyaml.IntBounds(p.Want)
		return fmt.Errorf("%s: want a whole number from %s to %s, got %s", label, lo, hi, describe(p.Node))
	case strictyaml.UnknownKey:
		return fmt.Errorf("unknown key %q %s (known keys: %s)", p.Key, where, strings.Join(p.Keys, ", "))
	case strictyaml.RepeatedKey:
		return fmt.Errorf("key %q %s is already given at line %d", p.Key, where, p.First)
	case strictyaml.KeyNotName:
		return fmt.Errorf("a key %s is %s, not a name", where, describe(p.Node))
	case strictyaml.MergeNotMapping:
		return fmt.Errorf("<< merges a mapping, got %s", describe(p.Node))
	case strictyaml.MissingKey:
		if p.Other != "" {
			return fmt.Errorf("%s: needs %s or %s", label, p.Key, p.Other)
		}
		return fmt.Errorf("%s: needs %s", label, p.Key)
	case strictyaml.MissingValue:
		return fmt.Errorf("%s: needs a value", p.Path)
	case strictyaml.AliasCycle:
		return errors.New("the alias refers to a value that contains it")
	case strictyaml.TooLarge:
		return fmt.Errorf("the script is too large: its aliases expand to over %d values", maxVisits)
	}
	return fmt.Errorf("%s: %s", label, p.Kind) // merge keys are on and aliases nest without bound
}

func wantScalar(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

// describe names what a node is, for messages. An alias (only a key can
// be one here, values are followed) is "nothing", as it always was.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode {
		return "nothing"
	}
	return strictyaml.Describe(n, short.Width)
}

// jsonToNode parses a JSON document into a YAML node tree with the line of
// every value, so JSON scripts are checked and reported like YAML ones.
// Repeated keys and anything after the document are errors.
func jsonToNode(data []byte) (*yaml.Node, error) {
	nl := newlines(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readJSON(dec, nl, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &lineError{line: nl.line(dec.InputOffset()), err: errors.New("unexpected text after the JSON document")}
	}
	return n, nil
}

// maxJSONDepth bounds how deeply JSON values may nest; a script needs six.
const maxJSONDepth = 100

// readJSON reads one JSON value from dec, depth levels down.
func readJSON(dec *json.Decoder, nl lineIndex, depth int) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err, dec, nl)
	}
	line := nl.line(dec.InputOffset())
	if depth > maxJSONDepth {
		return nil, &lineError{line: line, err: fmt.Errorf("values nest more than %d deep", maxJSONDepth)}
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
			keys := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, jsonError(err, dec, nl)
				}
				key, _ := kt.(string)
				kline := nl.line(dec.InputOffset())
				if prev, dup := keys[key]; dup {
					return nil, &lineError{line: kline, err: fmt.Errorf("key %q is already given at line %d", key, prev)}
				}
				keys[key] = kline
				v, err := readJSON(dec, nl, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: kline, Style: yaml.DoubleQuotedStyle}, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(err, dec, nl)
			}
			return n, nil
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
			for dec.More() {
				v, err := readJSON(dec, nl, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(err, dec, nl)
			}
			return n, nil
		}
		return nil, &lineError{line: line, err: fmt.Errorf("unexpected %q", t)}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t, Line: line, Style: yaml.DoubleQuotedStyle}, nil
	case json.Number:
		tag := "!!float"
		if _, err := t.Int64(); err == nil {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String(), Line: line}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t), Line: line}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line}, nil
	}
	return nil, &lineError{line: line, err: fmt.Errorf("unexpected token %v", tok)}
}

// jsonError gives a JSON syntax error its line.
func jsonError(err error, dec *json.Decoder, nl lineIndex) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &lineError{line: nl.line(se.Offset), err: errors.New(strings.TrimPrefix(se.Error(), "json: "))}
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return &lineError{line: nl.line(dec.InputOffset()), err: errors.New("the JSON document ends too soon")}
	}
	return err
}

// lineIndex maps byte offsets to 1-based lines.
type lineIndex []int64 // offsets of the newlines

func newlines(data []byte) lineIndex {
	var idx lineIndex
	for i, c := range data {
		if c == '\n' {
			idx = append(idx, int64(i))
		}
	}
	return idx
}

// line returns the line of the byte just before off (the end of a token).
func (idx lineIndex) line(off int64) int {
	pos := max(off-1, 0)
	return sort.Search(len(idx), func(i int) bool { return idx[i] >= pos }) + 1
}
