package state

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// fill sets every field of v, recursively, to a value that is not zero.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("a")
	case reflect.Int, reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() {
			v.SetInt(int64(time.Second))
			return
		}
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"a":1}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	}
}

// changes returns, for every field of v reachable through structs,
// slices' first elements and pointers, a function that changes it in
// place (v must be a deep copy each time), named by its path.
func changes(v reflect.Value, path string, out map[string]func(reflect.Value)) {
	at := func(f func(reflect.Value)) { out[path] = f }
	switch v.Kind() {
	case reflect.String:
		at(func(v reflect.Value) { v.SetString(v.String() + "x") })
	case reflect.Int, reflect.Int64:
		at(func(v reflect.Value) { v.SetInt(v.Int() + 1) })
	case reflect.Bool:
		at(func(v reflect.Value) { v.SetBool(!v.Bool()) })
	case reflect.Float64:
		at(func(v reflect.Value) { v.SetFloat(v.Float() + 1) })
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			at(func(v reflect.Value) { v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Second))) })
			return
		}
		for i := range v.NumField() {
			i := i
			sub := map[string]func(reflect.Value){}
			changes(v.Field(i), path+"."+v.Type().Field(i).Name, sub)
			for p, f := range sub {
				out[p] = func(v reflect.Value) { f(v.Field(i)) }
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			at(func(v reflect.Value) { v.SetBytes([]byte(`{"a":2}`)) })
			out[path+"(nil)"] = func(v reflect.Value) { v.SetBytes(nil) }
			return
		}
		at(func(v reflect.Value) { v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem())) })
		out[path+"(nil)"] = func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }
		sub := map[string]func(reflect.Value){}
		changes(v.Index(0), path+"[0]", sub)
		for p, f := range sub {
			out[p] = func(v reflect.Value) { f(v.Index(0)) }
		}
	case reflect.Map:
		at(func(v reflect.Value) {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString("other")
			v.SetMapIndex(k, reflect.New(v.Type().Elem()).Elem())
		})
		out[path+"(nil)"] = func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }
	case reflect.Pointer:
		out[path+"(nil)"] = func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) }
		sub := map[string]func(reflect.Value){}
		changes(v.Elem(), path+"*", sub)
		for p, f := range sub {
			out[p] = func(v reflect.Value) { f(v.Elem()) }
		}
	default:
		panic("changes: add a case for " + v.Kind().String() + " at " + path)
	}
}

// checkEqual checks that equal tells a value filled in everywhere from a
// deep copy of it (make) and from every copy with one field changed, and
// that the changed copies also encode differently: a field the Equal
// methods forgot (one added to the type later) fails here.
func checkEqual[T any](t *testing.T, make func() T, equal func(a, b T) bool) {
	t.Helper()
	a := make()
	if !equal(a, make()) {
		t.Fatalf("%T: Equal of two copies is false", a)
	}
	all := map[string]func(reflect.Value){}
	changes(reflect.ValueOf(&a).Elem(), reflect.TypeFor[T]().Name(), all)
	aJSON, _ := json.Marshal(a)
	for p, change := range all {
		b := make()
		change(reflect.ValueOf(&b).Elem())
		if equal(a, b) {
			bJSON, _ := json.Marshal(b)
			if string(aJSON) != string(bJSON) {
				t.Errorf("%s changed (JSON %s, was %s): Equal still true", p, bJSON, aJSON)
			}
		}
	}
}

func TestEqualSeesEveryField(t *testing.T) {
	filled := func(v any) { fill(reflect.ValueOf(v).Elem()) }
	checkEqual(t, func() Plan { var p Plan; filled(&p); return p }, Plan.Equal)
	checkEqual(t, func() PhaseState { var p PhaseState; filled(&p); return p }, PhaseState.Equal)
}
