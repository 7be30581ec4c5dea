package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// lineError is a schema problem at a line of the file.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return e.err.Error() }
func (e *lineError) Unwrap() error { return e.err }

func errAt(n *yaml.Node, format string, args ...any) error {
	return &lineError{line: n.Line, err: fmt.Errorf(format, args...)}
}

// schema checks a YAML tree against the Go type it will be decoded into,
// strictly: every mapping key must be a field (or a map key), nothing is
// given twice, scalars must decode into their field's type. It records the
// line of every key by its dotted path, for validation errors later.
type schema struct {
	lines map[string]int
	depth int
}

const maxAliasDepth = 64

func (c *schema) check(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		if c.depth++; c.depth > maxAliasDepth {
			return errAt(n, "aliases nest too deep")
		}
		defer func() { c.depth-- }()
		return c.check(n.Alias, t, path)
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty value leaves the field unset
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return errAt(n, "%s must be a mapping, not %s", where(path), describe(n))
		}
		return c.mapping(n, path, func(key *yaml.Node) (reflect.Type, error) {
			f, ok := fieldByKey(t, key.Value)
			if !ok {
				return nil, errAt(key, "unknown key %q %s", key.Value, in(path))
			}
			return f, nil
		})
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return errAt(n, "%s must be a mapping, not %s", where(path), describe(n))
		}
		return c.mapping(n, path, func(*yaml.Node) (reflect.Type, error) { return t.Elem(), nil })
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return errAt(n, "%s must be a list, not %s", where(path), describe(n))
		}
		for i, item := range n.Content {
			if err := c.check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return errAt(n, "%s must be %s, not %s", where(path), wantScalar(t), describe(n))
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return errAt(n, "%s must be %s, not %s", where(path), wantScalar(t), describe(n))
	}
	return nil
}

// mapping checks each key of mapping n: a scalar, not given twice, with a
// value that checks against the type keyType gives for it.
func (c *schema) mapping(n *yaml.Node, path string, keyType func(*yaml.Node) (reflect.Type, error)) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			return errAt(key, "a key %s is %s, not a name", in(path), describe(key))
		}
		if key.Value == "<<" {
			return errAt(key, "merge keys (<<) are not supported %s", in(path))
		}
		if first, dup := seen[key.Value]; dup {
			return errAt(key, "key %q %s is given twice (first on line %d)", key.Value, in(path), first)
		}
		seen[key.Value] = key.Line
		t, err := keyType(key)
		if err != nil {
			return err
		}
		sub := join(path, key.Value)
		c.lines[sub] = key.Line
		if err := c.check(val, t, sub); err != nil {
			return err
		}
	}
	return nil
}

// fieldByKey returns the type of t's field whose yaml name is key.
func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f.Type, true
		}
	}
	return nil, false
}

func join(path, key string) string {
	if key == "" {
		return path
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func in(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "in " + path
}

func where(path string) string {
	if path == "" {
		return "the file"
	}
	return path
}

func wantScalar(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a " + t.Kind().String()
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return fmt.Sprintf("%q", v)
}

// lineOf returns the line a schema error is on, or 0.
func lineOf(err error) int {
	var le *lineError
	if errors.As(err, &le) {
		return le.line
	}
	return 0
}
