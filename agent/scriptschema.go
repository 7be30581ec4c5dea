package agent

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
)

// This file holds the strict half of script loading: a check of a parsed
// YAML (or JSON, converted) node tree against the Script type, before it is
// decoded. It names unknown keys, wrong types, repeated keys and missing
// required keys with their lines, the same way for both formats. Required
// keys are marked on struct fields with `script:"required"`, or
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

// misspelt marks, in the keys seen in a mapping, that it had an unknown
// key (no key of a script is empty).
const misspelt = ""

// maxProblems bounds the problems checkSchema reports.
const maxProblems = 20

// checkSchema checks root against the Script type. It reports every problem
// it finds (up to maxProblems), each a *lineError, joined in the order of
// the file; an alias that contains itself or expands too far stops the
// check where it is found.
func checkSchema(root *yaml.Node) error {
	if root.Kind != yaml.MappingNode {
		return errAt(root, "a script is a mapping with the keys architect, developer, reviewer and evaluator")
	}
	c := &schemaChecker{active: map[*yaml.Node]bool{}, fields: map[reflect.Type][]field{}}
	if err := c.checkNode(root, reflect.TypeFor[Script](), ""); err != nil {
		c.add(err)
	}
	if len(c.problems) > maxProblems {
		more := len(c.problems) - maxProblems
		c.problems = append(c.problems[:maxProblems], fmt.Errorf("and %d more problem(s)", more))
	}
	return errors.Join(c.problems...)
}

// maxVisits bounds the values checkSchema looks at, so aliases that expand
// exponentially (a "billion laughs") fail fast instead of running for ever.
const maxVisits = 1 << 18

// schemaChecker walks a node tree; it follows aliases, refusing ones that
// contain themselves.
type schemaChecker struct {
	active map[*yaml.Node]bool // the mappings and lists being checked
	fields map[reflect.Type][]field
	visits int
	// problems are what the check found so far; checkNode and friends
	// return an error only when the check cannot go on.
	problems []error
}

// add notes a problem and lets the check go on.
func (c *schemaChecker) add(err error) { c.problems = append(c.problems, err) }

// fieldsOf returns the fields of t, cached.
func (c *schemaChecker) fieldsOf(t reflect.Type) []field {
	f, ok := c.fields[t]
	if !ok {
		f = fieldsOf(t)
		c.fields[t] = f
	}
	return f
}

// enter marks n as being checked; it fails when n is already being checked
// (an alias inside its own anchor) or when too much has been checked.
func (c *schemaChecker) enter(n, at *yaml.Node) error {
	c.visits++
	if c.visits > maxVisits {
		return errAt(at, "the script is too large: its aliases expand to over %d values", maxVisits)
	}
	if c.active[n] {
		return errAt(at, "the alias refers to a value that contains it")
	}
	c.active[n] = true
	return nil
}

func (c *schemaChecker) leave(n *yaml.Node) { delete(c.active, n) }

// field is a struct field as the script sees it.
type field struct {
	name     string
	typ      reflect.Type
	required bool
	unless   string // the key that makes a required one unnecessary
}

// fieldsOf lists the keys of struct type t, in declaration order, following
// inline embedded structs.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if opts == "inline" {
			out = append(out, fieldsOf(f.Type)...)
			continue
		}
		fl := field{name: name, typ: f.Type}
		for _, o := range strings.Split(f.Tag.Get("script"), ",") {
			switch {
			case o == "required":
				fl.required = true
			case strings.HasPrefix(o, "unless="):
				fl.unless = strings.TrimPrefix(o, "unless=")
			}
		}
		out = append(out, fl)
	}
	return out
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// checkNode checks n against type t; path names it in messages.
func (c *schemaChecker) checkNode(n *yaml.Node, t reflect.Type, path string) error {
	at := n
	n = deref(n)
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		if err := c.enter(n, at); err != nil {
			return err
		}
		defer c.leave(n)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // the zero value
	}
	label := path
	if label == "" {
		label = "the script"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.add(errAt(n, "%s: want a mapping of keys (%s), got %s", label, keyList(c.fieldsOf(t)), describe(n)))
			return nil
		}
		seen := map[string]int{}
		if err := c.checkMapping(n, t, path, seen); err != nil {
			return err
		}
		if _, ok := seen[misspelt]; ok {
			return nil // a missing key is most likely the unknown one, misspelt
		}
		for _, f := range c.fieldsOf(t) {
			if _, ok := seen[f.name]; !ok && f.required {
				if _, ok := seen[f.unless]; f.unless != "" && ok {
					continue
				}
				if f.unless != "" {
					c.add(errAt(n, "%s: needs %s or %s", label, f.name, f.unless))
				} else {
					c.add(errAt(n, "%s: needs %s", label, f.name))
				}
			}
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.add(errAt(n, "%s: want a list, got %s", label, describe(n)))
			return nil
		}
		for i, e := range n.Content {
			if err := c.checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		c.add(errAt(n, "%s: want %s, got %s", label, wantScalar(t), describe(n)))
		return nil
	}
	tag := n.ShortTag()
	ok := true
	switch t.Kind() {
	case reflect.String:
		ok = tag == "!!str" || tag == "!!int" || tag == "!!float" || tag == "!!bool" || tag == "!!timestamp"
	case reflect.Int, reflect.Int64, reflect.Int32:
		ok = tag == "!!int"
	case reflect.Float64, reflect.Float32:
		ok = tag == "!!int" || tag == "!!float"
	case reflect.Bool:
		ok = tag == "!!bool"
	}
	if !ok {
		c.add(errAt(n, "%s: want %s, got %s", label, wantScalar(t), describe(n)))
	}
	return nil
}

// checkMapping checks the keys of mapping n against struct type t, adding
// the keys it finds to seen (key → line). Merge keys (<<) are followed.
func (c *schemaChecker) checkMapping(n *yaml.Node, t reflect.Type, path string, seen map[string]int) error {
	fields := c.fieldsOf(t)
	where := path
	if where == "" {
		where = "at the top level"
	} else {
		where = "in " + where
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if err := c.checkMerge(v, t, path, seen); err != nil {
				return err
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			c.add(errAt(k, "a key %s is %s, not a name", where, describe(k)))
			continue
		}
		if prev, dup := seen[k.Value]; dup && prev > 0 {
			c.add(errAt(k, "key %q %s is already given at line %d", k.Value, where, prev))
			continue
		}
		f, ok := fieldNamed(fields, k.Value)
		if !ok {
			c.add(errAt(k, "unknown key %q %s (known keys: %s)", k.Value, where, keyList(fields)))
			seen[misspelt] = 0
			continue
		}
		seen[k.Value] = k.Line
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		if dv := deref(v); f.required && dv.Kind == yaml.ScalarNode && dv.ShortTag() == "!!null" {
			c.add(errAt(k, "%s: needs a value", sub))
			continue
		}
		if err := c.checkNode(v, f.typ, sub); err != nil {
			return err
		}
	}
	return nil
}

// checkMerge checks the mapping (or list of mappings) merged in by <<. Keys
// merged in may be overridden, so they are recorded without a line.
func (c *schemaChecker) checkMerge(v *yaml.Node, t reflect.Type, path string, seen map[string]int) error {
	at := v
	v = deref(v)
	maps := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		maps = v.Content
	}
	for _, m := range maps {
		mAt := m
		if m = deref(m); m.Kind != yaml.MappingNode {
			c.add(errAt(m, "<< merges a mapping, got %s", describe(m)))
			continue
		}
		if m == v {
			mAt = at
		}
		if err := c.enter(m, mAt); err != nil {
			return err
		}
		merged := map[string]int{}
		err := c.checkMapping(m, t, path, merged)
		c.leave(m)
		if err != nil {
			return err
		}
		for k := range merged {
			if _, ok := seen[k]; !ok {
				seen[k] = 0
			}
		}
	}
	return nil
}

// fieldNamed finds the field for a key.
func fieldNamed(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

func keyList(fields []field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
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

// describe names what a node is, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(clip(n.Value))
	}
	return "nothing"
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
