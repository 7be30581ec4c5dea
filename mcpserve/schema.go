package mcpserve

import (
	"encoding"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaOf is the JSON schema of T, inferred as the SDK does, but with
// every type that marshals itself as text (gaffer's enumerations: a run's
// status, a task's type, a review's verdict) a string, as it is written,
// rather than the integer it is in Go.
func schemaOf[T any]() (*jsonschema.Schema, error) {
	texts := map[reflect.Type]*jsonschema.Schema{}
	textTypes(reflect.TypeFor[T](), map[reflect.Type]bool{}, texts)
	return jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: texts})
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

// textTypes adds to out each type reachable from t whose values marshal
// as text and that is not a string or a struct the inference knows.
func textTypes(t reflect.Type, seen map[reflect.Type]bool, out map[reflect.Type]*jsonschema.Schema) {
	if seen[t] {
		return
	}
	seen[t] = true
	if t.Kind() != reflect.String && t.Kind() != reflect.Struct && t.Kind() != reflect.Pointer && t.Implements(textMarshaler) {
		out[t] = &jsonschema.Schema{Type: "string"}
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		textTypes(t.Elem(), seen, out)
	case reflect.Map:
		textTypes(t.Key(), seen, out)
		textTypes(t.Elem(), seen, out)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				textTypes(f.Type, seen, out)
			}
		}
	}
}
