package markers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPINamesNoInternalType: no exported function, method, type,
// field or typed value of a public package names a type of an internal
// package, which an app could not name in turn. A public package that
// needs an engine's value keeps it unexported or gives it a public type.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	for _, pkg := range modulePackages(t) {
		if !public(pkg) {
			continue
		}
		files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(pkg), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if f.Name.Name == "main" {
				continue
			}
			internal := internalImports(f)
			for _, d := range f.Decls {
				for name, expr := range exportedTypes(d) {
					for _, ref := range internalRefs(expr, internal) {
						t.Errorf("%s: %s names %s, a type of an internal package; unexport it or give it a public type", file, name, ref)
					}
				}
			}
		}
	}
}

// public reports whether pkg (relative to the module) is one an app may
// import: outside internal/ and not one of the programs and checks that
// drive the module from outside.
func public(pkg string) bool {
	if slices.Contains(strings.Split(pkg, "/"), "internal") || strings.HasPrefix(pkg, "cmd/") {
		return false
	}
	return !slices.ContainsFunc(outside, func(p string) bool { return matches(p, pkg) })
}

// internalImports maps the names a file gives its internal imports to
// their paths.
func internalImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !slices.Contains(strings.Split(p, "/"), "internal") {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = p
	}
	return out
}

// exportedTypes yields the type expressions of decl's exported API: a
// function's or method's signature and receiver, an alias's target, a
// struct's exported fields, an interface's methods, another type's
// definition, and the declared type of exported vars and consts.
func exportedTypes(decl ast.Decl) func(yield func(string, ast.Expr) bool) {
	return func(yield func(string, ast.Expr) bool) {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				return
			}
			if d.Recv != nil && !yield(d.Name.Name, d.Recv.List[0].Type) {
				return
			}
			yield(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if !specTypes(s, yield) {
					return
				}
			}
		}
	}
}

func specTypes(s ast.Spec, yield func(string, ast.Expr) bool) bool {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return true
		}
		st, ok := s.Type.(*ast.StructType)
		if !ok || s.Assign != 0 {
			return yield(s.Name.Name, s.Type)
		}
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 || slices.ContainsFunc(f.Names, (*ast.Ident).IsExported) {
				if !yield(s.Name.Name, f.Type) {
					return false
				}
			}
		}
	case *ast.ValueSpec:
		if s.Type != nil && slices.ContainsFunc(s.Names, (*ast.Ident).IsExported) {
			return yield(s.Names[0].Name, s.Type)
		}
	}
	return true
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// internalRefs lists the internal types expr names, as path.Name.
func internalRefs(expr ast.Expr, internal map[string]string) []string {
	var out []string
	ast.Inspect(expr, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
				out = append(out, internal[id.Name]+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}
