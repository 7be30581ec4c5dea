package recovery

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
)

// Counting a Go test file's assertions by what they call (issue 33): a
// call on a value of type *testing.T, *testing.B, *testing.F or
// testing.TB, whatever it is named (t, tb, b, f), of Error, Errorf,
// Fatal, Fatalf, Fail or FailNow; a call of testify's require or assert;
// and a call of a helper that asserts. A helper is a function (or a
// closure assigned to a name) whose body asserts, or that calls such a
// helper; the assertions inside its body are not counted, its calls are,
// so inlining a helper or extracting one ("func check(tb testing.TB, …)"
// called four times for four t.Fatalf) keeps the count. A call that
// hands a test value to a function of the changed files' helpers counts,
// and so does one to a function elsewhere whose name says it asserts
// (check, assert, expect, require, must, verify, ensure, want, equal).

// assertMethods are the testing methods that fail a test.
var assertMethods = map[string]bool{"Error": true, "Errorf": true, "Fatal": true, "Fatalf": true, "Fail": true, "FailNow": true}

// skipMethods are the testing methods that skip a test.
var skipMethods = map[string]bool{"Skip": true, "Skipf": true, "SkipNow": true}

// assertPackages are packages whose every call asserts (testify's
// require and assert, matryer/is's is, quicktest's qt).
var assertPackages = map[string]bool{"require": true, "assert": true, "is": true, "qt": true}

// assertiveName is a helper's name that says it asserts.
var assertiveName = lazyRegexp(`(?i)^(?:assert|require|check|expect|must|verify|ensure|want|equal)`)

// goFile is a parsed Go test file.
type goFile struct {
	file *ast.File
	// tvals are the names of parameters of a testing type.
	tvals map[string]bool
}

func parseGo(src string) (goFile, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		return goFile{}, false
	}
	g := goFile{file: f, tvals: map[string]bool{}}
	ast.Inspect(f, func(n ast.Node) bool {
		var ft *ast.FuncType
		switch x := n.(type) {
		case *ast.FuncDecl:
			ft = x.Type
		case *ast.FuncLit:
			ft = x.Type
		}
		if ft != nil && ft.Params != nil {
			for _, p := range ft.Params.List {
				if testingType(p.Type) {
					for _, id := range p.Names {
						g.tvals[id.Name] = true
					}
				}
			}
		}
		return true
	})
	return g, true
}

// testingType reports whether e is *testing.T, *testing.B, *testing.F or
// testing.TB.
func testingType(e ast.Expr) bool {
	star := false
	if s, ok := e.(*ast.StarExpr); ok {
		e, star = s.X, true
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "testing" {
		return false
	}
	switch sel.Sel.Name {
	case "T", "B", "F":
		return star
	case "TB":
		return !star
	}
	return false
}

// helperBody is a function body that may be a helper, with its name.
type helperBody struct {
	name string
	body *ast.BlockStmt
}

// bodies lists the file's functions other than tests, benchmarks, fuzz
// tests and examples, and its closures assigned to a name.
func (g goFile) bodies() []helperBody {
	var out []helperBody
	for _, d := range g.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && !isTestFunc(fd) {
			out = append(out, helperBody{fd.Name.Name, fd.Body})
		}
	}
	ast.Inspect(g.file, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, r := range x.Rhs {
				if fl, ok := r.(*ast.FuncLit); ok && i < len(x.Lhs) {
					if id, ok := x.Lhs[i].(*ast.Ident); ok {
						out = append(out, helperBody{id.Name, fl.Body})
					}
				}
			}
		case *ast.ValueSpec:
			for i, v := range x.Values {
				if fl, ok := v.(*ast.FuncLit); ok && i < len(x.Names) {
					out = append(out, helperBody{x.Names[i].Name, fl.Body})
				}
			}
		}
		return true
	})
	return out
}

func isTestFunc(fd *ast.FuncDecl) bool {
	if fd.Recv != nil {
		return false
	}
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(fd.Name.Name, p) {
			return true
		}
	}
	return false
}

// callKind says what a call is to the counting.
type callKind int

const (
	callOther callKind = iota
	callAssert
	callSkip
	callHelper
)

// helperSet is what the changed files define: the names of their helpers
// and of all their other functions.
type helperSet struct{ helpers, defined map[string]bool }

// kindOf classifies call given the helpers known.
func (g goFile) kindOf(call *ast.CallExpr, hs helperSet) callKind {
	var name string
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok {
			switch {
			case g.tvals[id.Name] && assertMethods[fn.Sel.Name]:
				return callAssert
			case g.tvals[id.Name] && skipMethods[fn.Sel.Name]:
				return callSkip
			case assertPackages[id.Name]:
				return callAssert
			}
		}
		name = fn.Sel.Name
	case *ast.Ident:
		name = fn.Name
	default:
		return callOther
	}
	if hs.helpers[name] {
		return callHelper
	}
	if !hs.defined[name] && len(call.Args) > 0 && assertiveName().MatchString(name) {
		if id, ok := call.Args[0].(*ast.Ident); ok && g.tvals[id.Name] {
			return callHelper
		}
	}
	return callOther
}

// asserts reports whether body calls an assertion or a helper.
func (g goFile) asserts(body *ast.BlockStmt, hs helperSet) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && !found {
			if k := g.kindOf(c, hs); k == callAssert || k == callHelper {
				found = true
			}
		}
		return !found
	})
	return found
}

// goHelpers returns the functions files define and, of those, the
// helpers: functions and named closures whose body asserts or calls a
// helper, found to a fixed point.
func goHelpers(files []goFile) helperSet {
	hs := helperSet{helpers: map[string]bool{}, defined: map[string]bool{}}
	for _, g := range files {
		for _, hb := range g.bodies() {
			hs.defined[hb.name] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, g := range files {
			for _, hb := range g.bodies() {
				if !hs.helpers[hb.name] && g.asserts(hb.body, hs) {
					hs.helpers[hb.name], changed = true, true
				}
			}
		}
	}
	return hs
}

// count counts g's test functions, assertions (calls of helpers
// included, the assertions inside helpers not) and skips.
func (g goFile) count(hs helperSet) (funcs, asserts, skips int) {
	inHelper := map[*ast.BlockStmt]bool{}
	for _, hb := range g.bodies() {
		if hs.helpers[hb.name] {
			inHelper[hb.body] = true
		}
	}
	for _, d := range g.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && isTestFunc(fd) && strings.HasPrefix(fd.Name.Name, "Test") {
			funcs++
		}
	}
	ast.Inspect(g.file, func(n ast.Node) bool {
		if b, ok := n.(*ast.BlockStmt); ok && inHelper[b] {
			return false
		}
		if c, ok := n.(*ast.CallExpr); ok {
			switch g.kindOf(c, hs) {
			case callAssert, callHelper:
				asserts++
			case callSkip:
				skips++
			}
		}
		return true
	})
	return funcs, asserts, skips
}

// goTestValues finds, in Go text that does not parse, the names declared
// with a testing type ("t *testing.T", "tb testing.TB").
var goTestValues = lazyRegexp(`\b(\w+)\s+(?:\*testing\.[TBF]|testing\.TB)\b`)

// goAssertRe returns the regexp of assertion calls on names, for Go text
// that does not parse.
func goAssertRe(names map[string]bool) *regexp.Regexp {
	alts := []string{"t"}
	for n := range names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	return regexp.MustCompile(`\b(?:` + strings.Join(alts, "|") + `)\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\b(?:require|assert)\.\w+\(`)
}
