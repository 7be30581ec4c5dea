package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Codec turns a state into named values and back. A checkpoint stores one
// value per name, and stores keep values content-addressed, so a codec that
// splits the state into independent parts lets an unchanged part be stored
// once. Decode must reject what it does not recognise.
type Codec[S any] interface {
	Encode(S) (map[string][]byte, error)
	Decode(map[string][]byte) (S, error)
}

// wholeKey is the single value name JSONCodec uses for a state that is not a struct.
const wholeKey = "$"

// JSONCodec is the default codec. A struct state is stored as one JSON value
// per exported field, named as encoding/json names it (the json tag, or the
// field name; "-" skips a field); any other state is one value named "$".
// Decode is strict: an unknown or missing field, or an unknown field inside a
// nested struct, is an error.
//
// Encode remembers the last bytes of each field whose type holds no
// pointers, slices, maps or interfaces, and reuses them when the field's value
// has not changed, so an unchanged large string is not encoded again.
type JSONCodec[S any] struct {
	fields []codecField // nil for a non-struct state

	mu    sync.Mutex
	cache []fieldCache
}

type codecField struct {
	index     int
	name      string
	cacheable bool
}

type fieldCache struct {
	valid bool
	last  reflect.Value // a copy of the value last encoded
	bytes []byte
}

// NewJSONCodec returns the JSON codec for S.
func NewJSONCodec[S any]() *JSONCodec[S] {
	c := &JSONCodec[S]{}
	t := reflect.TypeFor[S]()
	if t.Kind() != reflect.Struct {
		return c
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" && !strings.Contains(tag, ",") {
				continue
			}
			if n != "" {
				name = n
			}
		}
		c.fields = append(c.fields, codecField{index: i, name: name, cacheable: flat(f.Type)})
	}
	c.cache = make([]fieldCache, len(c.fields))
	return c
}

// flat reports whether values of t can be compared with == and hold nothing
// that could change behind the codec's back.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return !t.Implements(marshalerType) && !reflect.PointerTo(t).Implements(marshalerType)
	case reflect.Array:
		return flat(t.Elem())
	case reflect.Struct:
		if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
			return false
		}
		for i := range t.NumField() {
			if !flat(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// Encode implements Codec.
func (c *JSONCodec[S]) Encode(s S) (map[string][]byte, error) {
	if c.fields == nil {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("%w: encode state: %w", ErrCodec, err)
		}
		return map[string][]byte{wholeKey: b}, nil
	}
	v := reflect.ValueOf(&s).Elem()
	out := make(map[string][]byte, len(c.fields))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.fields {
		fv := v.Field(f.index)
		fc := &c.cache[i]
		if f.cacheable && fc.valid && fv.Equal(fc.last) {
			out[f.name] = fc.bytes
			continue
		}
		b, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, fmt.Errorf("%w: encode field %s: %w", ErrCodec, f.name, err)
		}
		if f.cacheable {
			if !fc.valid {
				fc.last = reflect.New(fv.Type()).Elem()
			}
			fc.last.Set(fv)
			fc.bytes, fc.valid = b, true
		}
		out[f.name] = b
	}
	return out, nil
}

// Decode implements Codec.
func (c *JSONCodec[S]) Decode(values map[string][]byte) (S, error) {
	var s S
	if c.fields == nil {
		if err := checkKeys(values, []string{wholeKey}); err != nil {
			return s, err
		}
		if err := strictUnmarshal(values[wholeKey], &s); err != nil {
			return s, fmt.Errorf("%w: decode state: %w", ErrCodec, err)
		}
		return s, nil
	}
	names := make([]string, len(c.fields))
	for i, f := range c.fields {
		names[i] = f.name
	}
	if err := checkKeys(values, names); err != nil {
		return s, err
	}
	v := reflect.ValueOf(&s).Elem()
	for _, f := range c.fields {
		if err := strictUnmarshal(values[f.name], v.Field(f.index).Addr().Interface()); err != nil {
			return s, fmt.Errorf("%w: decode field %s: %w", ErrCodec, f.name, err)
		}
	}
	return s, nil
}

func checkKeys(values map[string][]byte, names []string) error {
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
		if _, ok := values[n]; !ok {
			return fmt.Errorf("%w: %w %q", ErrCodec, ErrMissingField, n)
		}
	}
	for k := range values {
		if !known[k] {
			return fmt.Errorf("%w: %w %q", ErrCodec, ErrUnknownField, k)
		}
	}
	return nil
}

func strictUnmarshal(b []byte, dst any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
