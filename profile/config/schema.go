package config

import (
	"errors"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/gaffer-dev/gaffer/internal/strictyaml"
)

// checkSchema checks a YAML tree against the Go type t it will be decoded
// into, strictly (internal/strictyaml): every mapping key must be a field
// (or a map key), nothing is given twice, merge keys are refused and
// scalars must decode into their field's type (an integer field takes
// only an integer in decimal digits that fits it). It records the line of
// every key by its dotted path in lines, for validation errors later, and
// returns the first problem found and its line.
func checkSchema(n *yaml.Node, t reflect.Type, lines map[string]int) (line int, err error) {
	c := strictyaml.Checker{Scalar: strictyaml.Decodes, MaxAliasDepth: maxAliasDepth, Max: 1, Lines: lines}
	ps := c.Check(n, t)
	if len(ps) == 0 {
		return 0, nil
	}
	return ps[0].Line, schemaProblem(ps[0])
}

const maxAliasDepth = 64

// schemaProblem words a problem the check found.
func schemaProblem(p strictyaml.Problem) error {
	switch p.Kind {
	case strictyaml.WrongType:
		switch p.Want.Kind() {
		case reflect.Struct, reflect.Map:
			return fmt.Errorf("%s must be a mapping, not %s", where(p.Path), describe(p.Node))
		case reflect.Slice:
			return fmt.Errorf("%s must be a list, not %s", where(p.Path), describe(p.Node))
		}
		return fmt.Errorf("%s must be %s, not %s", where(p.Path), wantScalar(p.Want), describe(p.Node))
	case strictyaml.NotDecimal:
		return fmt.Errorf("%s must be an integer in plain decimal digits (no leading 0, 0x, 0o, 0b or _), not %s", where(p.Path), describe(p.Node))
	case strictyaml.OutOfRange:
		lo, hi := strictyaml.IntBounds(p.Want)
		return fmt.Errorf("%s must be an integer from %s to %s, not %s", where(p.Path), lo, hi, describe(p.Node))
	case strictyaml.UnknownKey:
		return fmt.Errorf("unknown key %q %s", p.Key, in(p.Path))
	case strictyaml.RepeatedKey:
		return fmt.Errorf("key %q %s is given twice (first on line %d)", p.Key, in(p.Path), p.First)
	case strictyaml.KeyNotName:
		return fmt.Errorf("a key %s is %s, not a name", in(p.Path), describe(p.Node))
	case strictyaml.MergeKey:
		return fmt.Errorf("merge keys (<<) are not supported %s", in(p.Path))
	case strictyaml.AliasCycle, strictyaml.AliasTooDeep:
		return errors.New("aliases nest too deep")
	case strictyaml.TooLarge:
		return fmt.Errorf("aliases expand to over %d values", strictyaml.DefaultMaxVisits)
	}
	return fmt.Errorf("%s: %s", where(p.Path), p.Kind) // no key is required, merge keys are refused
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
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a " + t.Kind().String()
}

// describe names what a node is, for messages.
func describe(n *yaml.Node) string { return strictyaml.Describe(n, 40) }
