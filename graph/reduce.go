package graph

// This file holds the reducers: how what a node returns is applied to the
// state, field by field. It is pure: no I/O, no clock.

import (
	"fmt"
	"reflect"
	"strings"
)

// reduceKind is how a field combines the writes of a step.
type reduceKind uint8

const (
	reduceOnce   reduceKind = iota // untagged: one writer per step, which sets it
	reduceLast                     // graph:"last": every writer sets it, the last branch wins
	reduceAppend                   // graph:"append": a slice; writes are appended
	reduceSum                      // graph:"sum": a number; writes are added
	reduceCustom                   // Graph.Reduce: a function of the current value and the write
)

// tagReducers are the reducers a graph struct tag may name.
var tagReducers = map[string]reduceKind{"last": reduceLast, "append": reduceAppend, "sum": reduceSum}

func (k reduceKind) String() string {
	switch k {
	case reduceOnce:
		return "once"
	case reduceLast:
		return "last"
	case reduceAppend:
		return "append"
	case reduceSum:
		return "sum"
	case reduceCustom:
		return "custom"
	}
	return fmt.Sprintf("reduceKind(%d)", int(k))
}

// FieldReducer is a custom reducer of one field of the state, made by
// Reducer and given to Graph.Reduce.
type FieldReducer[S any] struct {
	typ   reflect.Type      // the field's type
	field func(*S) any      // the field's address, as the accessor gives it
	apply func(dst, upd *S) // dst's field = fn(dst's field, upd's field)
}

// Reducer returns a custom reducer for the field that field points to (a
// top-level field of S, as in func(s *S) *[]int { return &s.Votes }): when a
// node writes the field, its new value is fn(current, written). Compile
// checks that field returns a field of S that no other reducer claims.
// fn must be a pure function; it must not change current or written in
// place (return a new slice or map).
func Reducer[S, T any](field func(*S) *T, fn func(current, written T) T) FieldReducer[S] {
	return FieldReducer[S]{
		typ:   reflect.TypeFor[T](),
		field: func(s *S) any { return field(s) },
		apply: func(dst, upd *S) {
			d := field(dst)
			*d = fn(*d, *field(upd))
		},
	}
}

// Reduce gives fields of the state custom reducers (see Reducer). The
// built-in reducers are struct tags on the state's fields: graph:"append"
// (a slice: writes are appended), graph:"sum" (a number: writes are added)
// and graph:"last" (the last write in branch order wins); a field with no
// reducer takes one write per step. With a reducer on any field, by tag or
// by Reduce, a fan-out needs no merge function: the reducers combine the
// branches.
func (g *Graph[S]) Reduce(rs ...FieldReducer[S]) *Graph[S] {
	g.reducers = append(g.reducers, rs...)
	return g
}

// fieldPlan is the compiled reducers of a struct state: one entry per
// exported field, in declaration order.
type fieldPlan[S any] struct {
	fields   []planField[S]
	reducing bool // some field has a reducer: fan-outs merge through the plan
}

type planField[S any] struct {
	index  int
	name   string
	kind   reduceKind
	flat   bool              // compared with ==
	custom func(dst, upd *S) // reduceCustom
}

// fieldOp is what a result does to one field.
type fieldOp uint8

const (
	opNone   fieldOp = iota
	opSet            // the field takes the written value
	opAppend         // the written slice is appended
	opAdd            // the written number is added
	opReduce         // the custom reducer combines the field and the written value
)

// newFieldPlan compiles the reducers of S: its graph tags and the custom
// reducers given. It returns nil and no problem for a state that is not a
// struct and has no reducers.
func newFieldPlan[S any](custom []FieldReducer[S]) (*fieldPlan[S], []string) {
	t := reflect.TypeFor[S]()
	if t.Kind() != reflect.Struct {
		if len(custom) > 0 {
			return nil, []string{fmt.Sprintf("Reduce: the state type %v is not a struct", t)}
		}
		return nil, nil
	}
	var p []string
	plan := &fieldPlan[S]{}
	byIndex := map[int]int{} // struct field index -> plan index
	for i := range t.NumField() {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("graph")
		if !f.IsExported() {
			if tagged {
				p = append(p, fmt.Sprintf("field %s: a graph tag on an unexported field (the state's codec does not keep it)", f.Name))
			}
			continue
		}
		pf := planField[S]{index: i, name: f.Name, flat: flat(f.Type)}
		if tagged {
			kind, ok := tagReducers[tag]
			switch {
			case !ok:
				p = append(p, fmt.Sprintf("field %s: unknown reducer graph:%q (use append, sum or last)", f.Name, tag))
			case kind == reduceAppend && f.Type.Kind() != reflect.Slice:
				p = append(p, fmt.Sprintf("field %s: graph:\"append\" needs a slice, not %v", f.Name, f.Type))
			case kind == reduceSum && !numeric(f.Type):
				p = append(p, fmt.Sprintf("field %s: graph:\"sum\" needs a number, not %v", f.Name, f.Type))
			default:
				pf.kind = kind
				plan.reducing = true
			}
		}
		byIndex[i] = len(plan.fields)
		plan.fields = append(plan.fields, pf)
	}
	for _, r := range custom {
		i, err := r.locate(t)
		if err != nil {
			p = append(p, "Reduce: "+err.Error())
			continue
		}
		j, ok := byIndex[i]
		if !ok {
			p = append(p, fmt.Sprintf("Reduce: field %s is unexported (the state's codec does not keep it)", t.Field(i).Name))
			continue
		}
		pf := &plan.fields[j]
		switch {
		case pf.kind == reduceCustom:
			p = append(p, fmt.Sprintf("Reduce: field %s has two custom reducers", pf.name))
		case pf.kind != reduceOnce:
			p = append(p, fmt.Sprintf("Reduce: field %s has a graph:%q tag and a custom reducer", pf.name, pf.kind))
		default:
			pf.kind, pf.custom = reduceCustom, r.apply
			plan.reducing = true
		}
	}
	return plan, p
}

func numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// locate returns the index of the top-level field of the struct type t that
// r's accessor points to.
func (r FieldReducer[S]) locate(t reflect.Type) (i int, err error) {
	if r.field == nil || r.apply == nil {
		return 0, fmt.Errorf("a zero FieldReducer (make one with graph.Reducer)")
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the field function panicked on a zero state: %v", v)
		}
	}()
	var s S
	base := reflect.ValueOf(&s).Pointer()
	fp := reflect.ValueOf(r.field(&s)).Pointer()
	if fp < base || fp >= base+t.Size() {
		return 0, fmt.Errorf("the field function does not return the address of a field of %v", t)
	}
	off := fp - base
	for i := range t.NumField() {
		if f := t.Field(i); f.Offset == off && f.Type == r.typ {
			return i, nil
		}
	}
	return 0, fmt.Errorf("the field function returns a %v inside a field of %v, not a top-level field", r.typ, t)
}

// partialOps returns how a partial update writes the state: each field
// that is not its zero value, through the field's reducer.
func (p *fieldPlan[S]) partialOps(upd *S, ops []fieldOp) []fieldOp {
	v := reflect.ValueOf(upd).Elem()
	for i, f := range p.fields {
		ops[i] = opNone
		if !v.Field(f.index).IsZero() {
			ops[i] = writeOp(f.kind)
		}
	}
	return ops
}

func writeOp(k reduceKind) fieldOp {
	switch k {
	case reduceAppend:
		return opAppend
	case reduceSum:
		return opAdd
	case reduceCustom:
		return opReduce
	}
	return opSet
}

// diff returns what a node that returned the whole state out for the
// input in wrote, as a value d and ops such that applying them to in
// gives out: an append field's new elements (when out extends in), a sum
// field's increase, and every other changed field's new value. With
// toReducer, a changed custom field's new value goes to its reducer
// (opReduce) instead of being set, as a fan-out branch's write does.
func (p *fieldPlan[S]) diff(in, out *S, d *S, ops []fieldOp, toReducer bool) []fieldOp {
	iv, ov, dv := reflect.ValueOf(in).Elem(), reflect.ValueOf(out).Elem(), reflect.ValueOf(d).Elem()
	for i, f := range p.fields {
		a, b := iv.Field(f.index), ov.Field(f.index)
		ops[i] = opNone
		switch f.kind {
		case reduceAppend:
			if n := a.Len(); b.Len() >= n && slicePrefix(a, b) {
				if b.Len() > n {
					dv.Field(f.index).Set(b.Slice3(n, b.Len(), b.Len()))
					ops[i] = opAppend
				}
				continue
			}
		case reduceSum:
			if delta, ok := subtract(b, a); ok {
				dv.Field(f.index).Set(delta)
				ops[i] = opAdd
			}
			continue
		}
		if equalField(f.flat, a, b) {
			continue
		}
		dv.Field(f.index).Set(b)
		ops[i] = opSet
		if toReducer && f.kind == reduceCustom {
			ops[i] = opReduce
		}
	}
	return ops
}

// slicePrefix reports whether a's elements begin b.
func slicePrefix(a, b reflect.Value) bool {
	n := a.Len()
	if n == 0 || a.Pointer() == b.Pointer() {
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Slice(0, n).Interface())
}

// subtract returns b - a for numbers, and whether it is not zero.
func subtract(b, a reflect.Value) (reflect.Value, bool) {
	d := reflect.New(a.Type()).Elem()
	switch {
	case a.CanInt():
		d.SetInt(b.Int() - a.Int())
	case a.CanUint():
		d.SetUint(b.Uint() - a.Uint())
	default:
		d.SetFloat(b.Float() - a.Float())
	}
	return d, !d.IsZero()
}

func equalField(flat bool, a, b reflect.Value) bool {
	if flat {
		return a.Equal(b)
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// write is one node's write to the state: a value and what each field does
// with it.
type write[S any] struct {
	node string
	val  S
	ops  []fieldOp
}

// apply returns base with the writes applied in order. A field without a
// reducer written by two writes is an error, as LangGraph's
// InvalidUpdateError. base is not changed: appends go to a new slice, made
// once per field with room for every write's elements.
func (p *fieldPlan[S]) apply(base S, ws []write[S]) (S, error) {
	if len(ws) > 1 {
		if err := p.checkWriters(ws); err != nil {
			return base, err
		}
	}
	next := base
	v := reflect.ValueOf(&next).Elem()
	// grow[i]: elements still to append to field i; grow[nf+i] is 1 once
	// field i holds a slice of apply's own.
	var grow []int
	nf := len(p.fields)
	for wi := range ws {
		for i, op := range ws[wi].ops {
			if op == opAppend {
				if grow == nil {
					grow = make([]int, 2*nf)
				}
				grow[i] += reflect.ValueOf(&ws[wi].val).Elem().Field(p.fields[i].index).Len()
			}
		}
	}
	for wi := range ws {
		w := &ws[wi]
		wv := reflect.ValueOf(&w.val).Elem()
		for i, op := range w.ops {
			if op == opNone {
				continue
			}
			f := p.fields[i]
			dst, src := v.Field(f.index), wv.Field(f.index)
			switch op {
			case opSet:
				dst.Set(src)
				if grow != nil {
					grow[nf+i] = 0
				}
			case opAppend:
				n, l := src.Len(), dst.Len()
				if grow[nf+i] == 0 {
					s := reflect.MakeSlice(dst.Type(), l, l+grow[i])
					reflect.Copy(s, dst)
					dst.Set(s)
					grow[nf+i] = 1
				}
				dst.SetLen(l + n) // within the capacity made above
				for j := range n {
					dst.Index(l + j).Set(src.Index(j))
				}
				grow[i] -= n
			case opAdd:
				switch {
				case dst.CanInt():
					dst.SetInt(dst.Int() + src.Int())
				case dst.CanUint():
					dst.SetUint(dst.Uint() + src.Uint())
				default:
					dst.SetFloat(dst.Float() + src.Float())
				}
			case opReduce:
				f.custom(&next, &w.val)
			}
		}
	}
	return next, nil
}

// checkWriters fails when a field without a reducer is written by more than
// one of ws.
func (p *fieldPlan[S]) checkWriters(ws []write[S]) error {
	for i, f := range p.fields {
		if f.kind != reduceOnce {
			continue
		}
		n := 0
		for _, w := range ws {
			if w.ops[i] != opNone {
				n++
			}
		}
		if n < 2 {
			continue
		}
		var by []string
		for _, w := range ws {
			if w.ops[i] != opNone {
				by = append(by, w.node)
			}
		}
		return fmt.Errorf("%w: field %s was written by %s in one step; give it a reducer (a graph:\"last\", \"append\" or \"sum\" tag, or Graph.Reduce) or merge with WithMerge",
			ErrConflict, f.name, strings.Join(by, ", "))
	}
	return nil
}

// patch returns in with a node's earlier write (from diff) applied: the
// state the node returns for in, when its write depends only on what its
// cache key covers.
func (p *fieldPlan[S]) patch(in S, d S, ops []fieldOp) S {
	out, _ := p.apply(in, []write[S]{{val: d, ops: ops}})
	return out
}
