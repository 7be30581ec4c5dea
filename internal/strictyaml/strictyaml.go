package strictyaml

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Kind is what a Problem is.
type Kind int

// The kinds of problem. Each names the Problem fields it sets besides Kind
// and Line.
const (
	// WrongType: the value at Path is not of the kind Want needs (a
	// mapping, a list or a suitable scalar). Node is the value; Keys are
	// Want's keys when it is a struct.
	WrongType Kind = iota + 1
	// UnknownKey: Key is not a key of the struct at Path. Keys are its keys.
	UnknownKey
	// RepeatedKey: Key is given again in the mapping at Path; First is
	// the line it was first given on.
	RepeatedKey
	// KeyNotName: a key of the mapping at Path is not a scalar. Node is
	// the key.
	KeyNotName
	// MergeKey: a merge key (<<) in the mapping at Path, where merges are
	// off (Checker.Merge).
	MergeKey
	// MergeNotMapping: a merge key's value, Node, is not a mapping.
	MergeNotMapping
	// MissingKey: the struct at Path needs Key (or Other, when set).
	MissingKey
	// MissingValue: the required key at Path (ending in Key) is given
	// with no value.
	MissingValue
	// AliasCycle: the alias at Line refers to a value that contains it
	// (when Checker.MaxAliasDepth is 0). The check stops there.
	AliasCycle
	// AliasTooDeep: the alias at Line is nested in more than
	// Checker.MaxAliasDepth others. The check stops there.
	AliasTooDeep
	// TooLarge: the aliases expand to more than Checker.MaxVisits values.
	// The check stops there.
	TooLarge
	// NotDecimal: the value at Path, Node, is an integer written in
	// another base or with underscores (0x10, 010, 1_000), where Want, an
	// integer type, takes plain decimal digits only (CheckInt).
	NotDecimal
	// OutOfRange: the value at Path, Node, is an integer that does not
	// fit Want, an integer type (IntBounds gives its range).
	OutOfRange
)

// String returns the kind's name, for tests and debugging.
func (k Kind) String() string {
	names := [...]string{"", "wrong type", "unknown key", "repeated key", "key not a name", "merge key",
		"merge of a non-mapping", "missing key", "missing value", "alias cycle", "aliases too deep", "too large",
		"integer not in decimal", "integer out of range"}
	if k > 0 && int(k) < len(names) {
		return names[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Problem is one thing a check found. Path is dotted ("profiles.fast.limits",
// "developer[0].actions[1]"); "" is the top level.
type Problem struct {
	Kind  Kind
	Line  int
	Path  string
	Key   string
	Other string       // MissingKey: the key that would do instead of Key
	First int          // RepeatedKey: the line Key was first given on
	Node  *yaml.Node   // WrongType, KeyNotName, MergeNotMapping, NotDecimal, OutOfRange: the node at fault
	Want  reflect.Type // WrongType, NotDecimal, OutOfRange: the type wanted, pointers removed
	Keys  []string     // WrongType into a struct, UnknownKey: the struct's keys, in order
}

// DefaultMaxVisits is the MaxVisits of a Checker that does not set it.
const DefaultMaxVisits = 1 << 18

// Checker checks node trees against Go types. The zero value checks
// scalars with FitsTag, refuses merge keys and marks no key required.
type Checker struct {
	// Merge follows merge keys (<<); keys merged in may be overridden.
	// Off, a key "<<" is a MergeKey problem.
	Merge bool
	// Tag names the struct tag that marks required keys:
	// `TAG:"required"`, or `TAG:"required,unless=OTHER"` when either key
	// will do. "" marks none.
	Tag string
	// Scalar reports whether scalar n suits type t; nil is FitsTag.
	// Integer types (int and uint kinds, but not time.Duration nor types
	// that decode themselves) are not passed to it: CheckInt checks them,
	// so that no value is cut down or read in another base.
	Scalar func(n *yaml.Node, t reflect.Type) bool
	// MaxAliasDepth bounds how many aliases a value may be nested in. 0
	// is no bound, and an alias inside its own anchor is an AliasCycle;
	// with a bound, such an alias is checked again against the type at
	// its place until the bound (or a problem) stops it.
	MaxAliasDepth int
	// MaxVisits bounds the mappings and lists looked at, aliases
	// expanded, so that aliases that expand exponentially (a "billion
	// laughs") fail fast; 0 is DefaultMaxVisits.
	MaxVisits int
	// Max stops the check after this many problems; 0 is no limit.
	Max int
	// Lines, when not nil, gets the line of every key by its dotted path.
	Lines map[string]int
}

// Check checks n against type t and returns the problems found, in the
// order of the file (a struct's missing keys after its other problems).
func (c *Checker) Check(n *yaml.Node, t reflect.Type) []Problem {
	w := &walker{Checker: c, active: map[*yaml.Node]bool{}, fields: map[reflect.Type][]field{}}
	if w.MaxVisits == 0 {
		w.MaxVisits = DefaultMaxVisits
	}
	if w.Scalar == nil {
		w.Scalar = FitsTag
	}
	w.node(n, t, "")
	return w.problems
}

// walker is one check's state.
type walker struct {
	*Checker
	active   map[*yaml.Node]bool // the mappings and lists being checked
	fields   map[reflect.Type][]field
	visits   int
	aliases  int // the aliases the current value is nested in
	stopped  bool
	problems []Problem
}

// add notes a problem; it reports whether the check goes on.
func (w *walker) add(p Problem) bool {
	w.problems = append(w.problems, p)
	if w.Max > 0 && len(w.problems) >= w.Max {
		w.stopped = true
	}
	return !w.stopped
}

// stop notes a problem that ends the check.
func (w *walker) stop(p Problem) bool {
	w.add(p)
	w.stopped = true
	return false
}

// enter marks n as being checked, reached at at; it fails when n is
// already being checked (an alias inside its own anchor) or when too much
// has been checked.
func (w *walker) enter(n, at *yaml.Node) bool {
	w.visits++
	if w.visits > w.MaxVisits {
		return w.stop(Problem{Kind: TooLarge, Line: at.Line})
	}
	if w.MaxAliasDepth > 0 {
		return true // the depth bound stops cycles
	}
	if w.active[n] {
		return w.stop(Problem{Kind: AliasCycle, Line: at.Line})
	}
	w.active[n] = true
	return true
}

func (w *walker) leave(n *yaml.Node) { delete(w.active, n) }

// node checks n against type t; it reports whether the check goes on.
func (w *walker) node(n *yaml.Node, t reflect.Type, path string) bool {
	at := n
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		if w.aliases++; w.MaxAliasDepth > 0 && w.aliases > w.MaxAliasDepth {
			return w.stop(Problem{Kind: AliasTooDeep, Line: n.Line})
		}
		defer func() { w.aliases-- }()
		n = deref(n)
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		if !w.enter(n, at) {
			return false
		}
		defer w.leave(n)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return true // the zero value
	}
	wrong := func(keys []string) bool {
		return w.add(Problem{Kind: WrongType, Line: n.Line, Path: path, Node: n, Want: t, Keys: keys})
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := w.fieldsOf(t)
		if n.Kind != yaml.MappingNode {
			return wrong(names(fields))
		}
		return w.structure(n, fields, path)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return wrong(nil)
		}
		var ks keys
		return w.mapping(n, path, &ks, func(*yaml.Node) (field, bool) { return field{typ: t.Elem()}, true }, nil)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return wrong(nil)
		}
		for i, e := range n.Content {
			if !w.node(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)) {
				return false
			}
		}
		return true
	}
	if n.Kind == yaml.ScalarNode && isInt(t) {
		if k := CheckInt(n, t); k != 0 {
			return w.add(Problem{Kind: k, Line: n.Line, Path: path, Node: n, Want: t})
		}
		return true
	}
	if n.Kind != yaml.ScalarNode || !w.Scalar(n, t) {
		return wrong(nil)
	}
	return true
}

// structure checks mapping n against a struct with the given fields, then
// that its required keys are there.
func (w *walker) structure(n *yaml.Node, fields []field, path string) bool {
	lookup := func(k *yaml.Node) (field, bool) { return fieldNamed(fields, k.Value) }
	var ks keys
	if !w.mapping(n, path, &ks, lookup, names(fields)) {
		return false
	}
	if ks.unknown {
		return true // a missing key is most likely the unknown one, misspelt
	}
	for _, f := range fields {
		if _, ok := ks.lines[f.name]; ok || !f.required {
			continue
		}
		if _, ok := ks.lines[f.unless]; f.unless != "" && ok {
			continue
		}
		if !w.add(Problem{Kind: MissingKey, Line: n.Line, Path: path, Key: f.name, Other: f.unless}) {
			return false
		}
	}
	return true
}

// keys are the keys a mapping gave: their lines (0 for keys merged in,
// which may be given again) and whether one was unknown.
type keys struct {
	lines   map[string]int
	unknown bool
}

// mapping checks the keys of mapping n, at path, and their values: lookup
// gives the field of a key (false: unknown), known lists the keys for
// messages. It adds the keys it finds to ks.
func (w *walker) mapping(n *yaml.Node, path string, ks *keys, lookup func(*yaml.Node) (field, bool), known []string) bool {
	if ks.lines == nil {
		ks.lines = map[string]int{}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if w.Merge && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			if !w.merge(v, path, ks, lookup, known) {
				return false
			}
			continue
		}
		var p Problem
		f, found := field{}, false
		switch {
		case k.Kind != yaml.ScalarNode:
			p = Problem{Kind: KeyNotName, Node: k}
		case !w.Merge && k.Value == "<<":
			p = Problem{Kind: MergeKey}
		case ks.lines[k.Value] > 0:
			p = Problem{Kind: RepeatedKey, Key: k.Value, First: ks.lines[k.Value]}
		default:
			if f, found = lookup(k); !found {
				ks.unknown = true
				p = Problem{Kind: UnknownKey, Key: k.Value, Keys: known}
			}
		}
		if !found {
			p.Line, p.Path = k.Line, path
			if !w.add(p) {
				return false
			}
			continue
		}
		ks.lines[k.Value] = k.Line
		sub := Join(path, k.Value)
		if w.Lines != nil {
			w.Lines[sub] = k.Line
		}
		if dv := deref(v); f.required && dv.Kind == yaml.ScalarNode && dv.ShortTag() == "!!null" {
			if !w.add(Problem{Kind: MissingValue, Line: k.Line, Path: sub, Key: k.Value}) {
				return false
			}
			continue
		}
		if !w.node(v, f.typ, sub) {
			return false
		}
	}
	return true
}

// merge checks the mapping (or list of mappings) merged in by <<. Keys
// merged in may be overridden, so they are recorded without a line.
func (w *walker) merge(v *yaml.Node, path string, ks *keys, lookup func(*yaml.Node) (field, bool), known []string) bool {
	at := v
	v = deref(v)
	maps := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		maps = v.Content
	}
	for _, m := range maps {
		mAt := m
		if m = deref(m); m.Kind != yaml.MappingNode {
			if !w.add(Problem{Kind: MergeNotMapping, Line: m.Line, Path: path, Node: m}) {
				return false
			}
			continue
		}
		if m == v {
			mAt = at
		}
		if !w.enter(m, mAt) {
			return false
		}
		var merged keys
		ok := w.mapping(m, path, &merged, lookup, known)
		w.leave(m)
		if !ok {
			return false
		}
		for k := range merged.lines {
			if _, ok := ks.lines[k]; !ok {
				ks.lines[k] = 0
			}
		}
		ks.unknown = ks.unknown || merged.unknown
	}
	return true
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Join returns the dotted path of key in the value at path.
func Join(path, key string) string {
	if key == "" {
		return path
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// field is a struct field as YAML sees it.
type field struct {
	name     string
	typ      reflect.Type
	required bool
	unless   string // the key that makes a required one unnecessary
}

// fieldsOf returns the fields of struct type t, cached.
func (w *walker) fieldsOf(t reflect.Type) []field {
	f, ok := w.fields[t]
	if !ok {
		f = fieldsOf(t, w.Tag)
		w.fields[t] = f
	}
	return f
}

// fieldsOf lists the keys of struct type t, in declaration order,
// following inline embedded structs; tag names the tag marking required
// ones.
func fieldsOf(t reflect.Type, tag string) []field {
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
			out = append(out, fieldsOf(f.Type, tag)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // as yaml.v3 names it
		}
		fl := field{name: name, typ: f.Type}
		if tag != "" {
			for _, o := range strings.Split(f.Tag.Get(tag), ",") {
				switch {
				case o == "required":
					fl.required = true
				case strings.HasPrefix(o, "unless="):
					fl.unless = strings.TrimPrefix(o, "unless=")
				}
			}
		}
		out = append(out, fl)
	}
	return out
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

func names(fields []field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// FitsTag reports whether scalar n's resolved tag suits type t: a string,
// number, boolean or timestamp for a string; an integer for int, int32 and
// int64; an integer or float for float32 and float64; a boolean for bool.
// Other types take any scalar. (A Checker checks integer types with
// CheckInt, which is stricter.)
func FitsTag(n *yaml.Node, t reflect.Type) bool {
	tag := n.ShortTag()
	switch t.Kind() {
	case reflect.String:
		return tag == "!!str" || tag == "!!int" || tag == "!!float" || tag == "!!bool" || tag == "!!timestamp"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return tag == "!!int"
	case reflect.Float64, reflect.Float32:
		return tag == "!!int" || tag == "!!float"
	case reflect.Bool:
		return tag == "!!bool"
	}
	return true
}

// Decodes reports whether scalar n decodes into a value of type t, as
// yaml.v3 would decode it.
func Decodes(n *yaml.Node, t reflect.Type) bool {
	return n.Decode(reflect.New(t).Interface()) == nil
}

// Describe names a node for messages: "a mapping", "a list", "an alias",
// or a scalar's value, quoted, its first width bytes and "…" when it is
// longer.
func Describe(n *yaml.Node, width int) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > width {
			v = v[:width] + "…"
		}
		return strconv.Quote(v)
	}
	return "nothing"
}
